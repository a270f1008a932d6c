#include "common/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/fd.h"

namespace kagent {

namespace fs = std::filesystem;

namespace {
[[noreturn]] void throw_errno(const std::string& what, const fs::path& p) {
  throw std::system_error(errno, std::generic_category(), what + " " + p.string());
}
}  // namespace

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_file_or_empty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  if (in) ss << in.rdbuf();
  return ss.str();
}

void write_all(int fd, std::string_view data, const fs::path& path) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("write", path);
    }
    off += static_cast<size_t>(n);
  }
}

void fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) ::fsync(fd.get());  // some filesystems refuse fsync on folders
}

void write_file_atomic(const fs::path& path, std::string_view data, bool durable) {
  // pid and a counter: unique across processes and across threads of one process.
  static std::atomic<unsigned> counter{0};
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) throw_errno("cannot create", tmp);
    try {
      write_all(fd.get(), data, tmp);
      if (durable && ::fsync(fd.get()) != 0) throw_errno("fsync", tmp);
    } catch (...) {
      ::unlink(tmp.c_str());
      throw;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    errno = e;
    throw_errno("rename to", path);
  }
  if (durable) fsync_dir(path.parent_path());
}

}  // namespace kagent
