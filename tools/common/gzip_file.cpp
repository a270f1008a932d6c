#include "common/gzip_file.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "common/files.h"

namespace kagent {

namespace {

struct GzClose {
  void operator()(gzFile f) const { (void)gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzClose>;

std::runtime_error gz_error(const std::string& what, const std::filesystem::path& path) {
  return std::runtime_error(what + " " + path.string());
}

}  // namespace

void write_gzip_file(const std::filesystem::path& path, std::string_view text) {
  // Compressed in memory (gzip framing, level 6), then written as any file is: a temp name
  // of its own and one rename (files.h).
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw gz_error("cannot compress", path);
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, deflateEnd);
  std::string out;
  char buf[1 << 16];
  int flush = Z_NO_FLUSH;
  while (flush != Z_FINISH) {
    const size_t chunk = std::min<size_t>(text.size(), INT_MAX / 2);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(chunk);
    text.remove_prefix(chunk);
    flush = text.empty() ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      if (deflate(&z, flush) == Z_STREAM_ERROR) throw gz_error("cannot compress", path);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  }
  write_file_atomic(path, out);
}

std::string read_gzip_file(const std::filesystem::path& path) {
  GzHandle in(gzopen(path.c_str(), "rb"));
  if (!in) throw gz_error("cannot open", path);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const int n = gzread(in.get(), buf, sizeof buf);
    if (n < 0) throw gz_error("damaged gzip file", path);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  // A stream cut short reads as an end of file; zlib says so here.
  int err = Z_OK;
  (void)gzerror(in.get(), &err);
  if (err != Z_OK && err != Z_STREAM_END) throw gz_error("damaged gzip file", path);
  return out;
}

}  // namespace kagent
