// Content-hash cache of compiled candidates (and of the per-signature host registration
// objects). Entries are built in a private temp folder and published with one rename, so
// readers never see half an entry and several processes may build the same key at once;
// a per-key file lock makes the second one wait and reuse the first one's result.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "result/eval_result.h"

namespace kagent {

// A private folder removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir() = default;
  explicit TempDir(std::filesystem::path p) : path_(std::move(p)) {}
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  TempDir& operator=(TempDir&& o) noexcept;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  void release() { path_.clear(); }  // keep the folder (it was renamed away)

 private:
  std::filesystem::path path_;
};

// An exclusive flock(2) held until destruction. Locks are per open file, so two threads
// of one process exclude each other as well as two processes do.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& file);  // blocks until acquired
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  int fd_ = -1;
};

class CompileCache {
 public:
  // The folder: `option`, else cache_root()/compile (common/paths.h).
  static std::filesystem::path default_dir(std::string_view option);

  explicit CompileCache(std::filesystem::path dir);  // creates it; sweeps day-old temp folders

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_dir(const std::string& key) const;

  // A stored result, with cache_hit set and the artifact path pointing into the entry.
  std::optional<CompileInfo> lookup(const std::string& key) const;
  // A fresh folder on the cache's filesystem to build `key` in.
  TempDir make_staging(const std::string& key) const;
  // Writes info.json into `staging`, renames it into place and returns the stored info
  // (another process's, if it published the same key first, unless `replace`). Paths
  // inside `info` that name the staging folder are rewritten to the entry folder.
  CompileInfo publish(const std::string& key, TempDir& staging, CompileInfo info, bool replace = false) const;
  FileLock lock(const std::string& key) const;

  // Small single files (host registration objects, the shim header), published atomically.
  std::filesystem::path file_path(std::string_view kind, const std::string& name) const;
  // Moves `tmp` to file_path(kind, name); atomic (rename replaces).
  void publish_file(const std::filesystem::path& tmp, const std::filesystem::path& dest) const;
  std::filesystem::path temp_file_path(const std::string& stem) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kagent
