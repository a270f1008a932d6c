#include "worker/client/file_users.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace kagent {

std::map<pid_t, std::vector<std::string>> descriptors_of_file(const std::vector<pid_t>& among,
                                                              const std::string& path) {
  std::map<pid_t, std::vector<std::string>> found;
  struct stat file {};
  if (::stat(path.c_str(), &file) != 0) return found;
  for (pid_t pid : among) {
    std::error_code ec;
    std::filesystem::directory_iterator fds(fmt::format("/proc/{}/fd", pid), ec), end;
    for (; !ec && fds != end; fds.increment(ec)) {
      struct stat st {};
      // stat follows the fd's link to the file itself, as the path above did (whatever the mount).
      if (::stat(fds->path().c_str(), &st) == 0 && st.st_dev == file.st_dev && st.st_ino == file.st_ino)
        found[pid].push_back(fds->path().filename().string());
    }
  }
  return found;
}

std::set<pid_t> processes_with_file_open(const std::vector<pid_t>& among, const std::string& path) {
  std::set<pid_t> found;
  for (const auto& [pid, fds] : descriptors_of_file(among, path)) found.insert(pid);
  return found;
}

}  // namespace kagent
