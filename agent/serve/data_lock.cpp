#include "serve/data_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/files.h"

namespace kagent::serve {

namespace fs = std::filesystem;

namespace {

// "pid 1234, port 8000": who holds the folder, as far as its files say.
std::string holder(const fs::path& data_dir, int fd) {
  std::string pid;
  char buf[32] = {};
  if (::pread(fd, buf, sizeof(buf) - 1, 0) > 0) pid = std::string(buf, ::strcspn(buf, "\n"));
  std::string port;
  try {
    const auto j = nlohmann::json::parse(read_file(data_dir / "server.json"), nullptr, false);
    if (j.is_object() && j.value("pid", 0) == std::atoi(pid.c_str()) && j.contains("port"))
      port = fmt::format(", port {}", j["port"].dump());
  } catch (const std::exception&) {
    // No server.json yet: the holder is still starting.
  }
  return pid.empty() ? std::string("another process") : fmt::format("pid {}{}", pid, port);
}

}  // namespace

DataLock::DataLock(const fs::path& data_dir) {
  const fs::path file = data_dir / "serve.lock";
  // O_CLOEXEC: the workers this server starts must not inherit the lock and outlive it.
  Fd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) throw std::runtime_error(fmt::format("cannot open {}: {}", file.string(), std::strerror(errno)));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK)
      throw DataInUse(fmt::format("another kagent serve ({}) is using this folder; give each server its own --data",
                                  holder(data_dir, fd.get())));
    throw std::runtime_error(fmt::format("cannot lock {}: {}", file.string(), std::strerror(err)));
  }
  // Ours now: say who holds it, for the next server that finds it taken.
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; only the message of a refused server is the poorer.
  }
  fd_ = std::move(fd);
}

}  // namespace kagent::serve
