#include "sandbox/scratch_dir.h"

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

// Plain POSIX calls, no std::filesystem: this runs inside kagent-worker, where libtorch's
// own copy of std::filesystem wins symbol resolution and its remove_all calls through a
// null pointer.

namespace kagent::sandbox {

namespace {

void make_folder(const std::string& p) {
  if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::system_error(errno, std::generic_category(), "sandbox scratch: mkdir " + p);
}

// mkdir -p
void make_folders(const std::string& p) {
  for (size_t slash = p.find('/', 1); slash != std::string::npos; slash = p.find('/', slash + 1))
    if (::mkdir(p.substr(0, slash).c_str(), 0755) != 0 && errno != EEXIST) break;
  make_folder(p);
}

}  // namespace

ScratchDir prepare_scratch(const std::string& requested) {
  ScratchDir s;
  std::string root;
  if (requested.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kagent-scratch-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw std::system_error(errno, std::generic_category(), "sandbox scratch: mkdtemp " + pattern);
    root = pattern;
    s.made_here = true;
  } else {
    root = requested;
    make_folders(root);
  }
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::system_error(errno ? errno : ENOTDIR, std::generic_category(), "sandbox scratch: " + root);
  // The violation monitor compares resolved paths against it.
  char resolved[PATH_MAX];
  if (!::realpath(root.c_str(), resolved))
    throw std::system_error(errno, std::generic_category(), "sandbox scratch: realpath " + root);
  s.root = resolved;
  s.folders.push_back(s.root);
  for (const char* sub : {"home", "tmp", "cache", "cache/triton", "cache/inductor", "cache/torch_extensions",
                          "cache/nv"}) {
    make_folder(s.root + "/" + sub);
    s.folders.push_back(s.root + "/" + sub);
  }
  auto in = [&](const char* sub) { return s.root + "/" + sub; };
  for (const char* var : {"TMPDIR", "TMP", "TEMP"}) s.environment.emplace_back(var, in("tmp"));
  s.environment.emplace_back("HOME", in("home"));
  s.environment.emplace_back("XDG_CACHE_HOME", in("cache"));
  s.environment.emplace_back("TRITON_CACHE_DIR", in("cache/triton"));
  s.environment.emplace_back("TORCHINDUCTOR_CACHE_DIR", in("cache/inductor"));
  s.environment.emplace_back("TORCH_EXTENSIONS_DIR", in("cache/torch_extensions"));
  s.environment.emplace_back("CUDA_CACHE_PATH", in("cache/nv"));
  // Bytecode caches would be written next to the sources, outside the scratch folder.
  s.environment.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  // A new HOME would hide packages installed with `pip --user` under the old one.
  const char* home = std::getenv("HOME");
  if (!std::getenv("PYTHONUSERBASE") && home && *home)
    s.environment.emplace_back("PYTHONUSERBASE", std::string(home) + "/.local");
  // getpass.getuser() falls back to the password database, which has no entry for the
  // sandbox's uid; these variables answer it first.
  if (!std::getenv("USER")) s.environment.emplace_back("USER", "kagent-sandbox");
  if (!std::getenv("LOGNAME")) s.environment.emplace_back("LOGNAME", "kagent-sandbox");
  return s;
}

bool searchable_by_others(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return false;
  auto searchable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IXOTH);
  };
  // The root, each folder on the way, then the folder itself.
  for (size_t end = 1; end != std::string::npos; end = dir.find('/', end + 1))
    if (!searchable(end == 1 ? std::string("/") : dir.substr(0, end))) return false;
  return searchable(dir);
}

std::string default_scratch_parent(const std::string& tmpdir) {
  if (searchable_by_others(tmpdir)) return tmpdir;
  for (const char* shared : {"/tmp", "/var/tmp"})
    if (searchable_by_others(shared) && ::access(shared, W_OK) == 0) return shared;
  return tmpdir;
}

void export_environment(const ScratchDir& scratch) {
  for (const auto& [key, value] : scratch.environment) ::setenv(key.c_str(), value.c_str(), 1);
}

void remove_tree(const std::string& root) {
  // Depth first, symlinks removed rather than followed, never into another filesystem.
  auto remove_one = [](const char* path, const struct stat*, int, FTW*) {
    ::remove(path);  // what cannot go stays; the rest still goes
    return 0;
  };
  ::nftw(root.c_str(), remove_one, 64, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

}  // namespace kagent::sandbox
