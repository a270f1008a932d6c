// A fresh folder under the system's temp folder for one test, removed with everything in it
// when the test ends: tests leave nothing behind.
#pragma once

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace kagent::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "kagent-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (tag + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  // Removed with POSIX calls: in tests linked with libtorch, std::filesystem::remove_all can
  // bind to a copy libtorch exports, which crashes.
  ~TempDir() {
    ::nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // Writes `content` to `name` (folders made as needed); returns the file's path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace kagent::testing
