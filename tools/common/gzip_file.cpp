#include "common/gzip_file.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <stdexcept>
#include <system_error>

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
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    GzHandle out(gzopen(tmp.c_str(), "wb6"));
    if (!out) throw gz_error("cannot create", tmp);
    while (!text.empty()) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(text.size(), INT_MAX / 2));
      if (gzwrite(out.get(), text.data(), chunk) != static_cast<int>(chunk)) throw gz_error("cannot write", tmp);
      text.remove_prefix(chunk);
    }
    if (gzclose(out.release()) != Z_OK) throw gz_error("cannot write", tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw gz_error("cannot rename to " + path.string() + ":", tmp);
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
