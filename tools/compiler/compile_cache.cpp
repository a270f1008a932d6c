#include "compiler/compile_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/paths.h"
#include "common/utf8.h"
#include "compiler/nvcc_command.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {

constexpr const char* kInfoFile = "info.json";

// pid + 64 random bits: distinct across processes and across threads of one process.
std::string unique_suffix() {
  std::random_device rd;
  return fmt::format("{}.{:08x}{:08x}", ::getpid(), rd(), rd());
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace

TempDir& TempDir::operator=(TempDir&& o) noexcept {
  if (this != &o) {
    TempDir old(std::move(*this));
    path_ = std::exchange(o.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

FileLock::FileLock(const fs::path& file) {
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open lock " + file.string());
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd_);
    throw std::system_error(e, std::generic_category(), "flock " + file.string());
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

fs::path CompileCache::default_dir(std::string_view option) {
  if (!option.empty()) return fs::path(option);
  return fs::path(cache_root()) / "compile";
}

CompileCache::CompileCache(fs::path dir) : dir_(std::move(dir)) {
  if (auto why = folder_nvcc_cannot_take(dir_)) throw std::invalid_argument(*why);
  fs::create_directories(dir_ / "tmp");
  fs::create_directories(dir_ / "locks");
  // Folders left by killed processes: anything a day old is nobody's work in progress.
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (const auto& e : fs::directory_iterator(dir_ / "tmp", ec)) {
    std::error_code ec2;
    if (e.last_write_time(ec2) < cutoff && !ec2) fs::remove_all(e.path(), ec2);
  }
}

fs::path CompileCache::entry_dir(const std::string& key) const { return dir_ / key.substr(0, 2) / key; }

std::optional<CompileInfo> CompileCache::lookup(const std::string& key) const {
  const fs::path entry = entry_dir(key);
  std::ifstream in(entry / kInfoFile);
  if (!in) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    CompileInfo info = j.get<CompileInfo>();
    info.cache_hit = true;
    info.seconds = 0;
    info.peak_rss_mb = 0;
    info.steps.clear();
    if (!info.artifact.empty()) {
      info.artifact = (entry / fs::path(info.artifact).filename()).string();
      if (!fs::exists(info.artifact)) return std::nullopt;  // damaged entry: rebuild
    }
    if (info.sass && !info.sass->file.empty()) info.sass->file = (entry / fs::path(info.sass->file).filename()).string();
    return info;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: treat as a miss, the rebuild replaces it
  }
}

TempDir CompileCache::make_staging(const std::string& key) const {
  fs::path p = dir_ / "tmp" / (key.substr(0, 16) + "." + unique_suffix());
  fs::create_directories(p);
  return TempDir(p);
}

CompileInfo CompileCache::publish(const std::string& key, TempDir& staging, CompileInfo info, bool replace) const {
  const fs::path entry = entry_dir(key);
  const std::string from = staging.path().string(), to = entry.string();
  info.artifact = replace_all(info.artifact, from, to);
  info.command = replace_all(info.command, from, to);
  info.log = replace_all(info.log, from, to);
  if (info.sass) info.sass->file = replace_all(info.sass->file, from, to);
  CompileInfo stored = info;
  stored.cache_hit = false;
  write_file(staging.path() / kInfoFile, dump_json(nlohmann::json(stored), 2));  // a log of any bytes
  fs::create_directories(entry.parent_path());
  std::error_code ec;
  fs::rename(staging.path(), entry, ec);
  if (!ec) {
    staging.release();
    return info;
  }
  // Someone published this key first (rename onto a non-empty folder fails): use theirs.
  if (!replace)
    if (auto theirs = lookup(key)) return *theirs;
  // An old or damaged entry in the way: move it aside (a loaded .so stays valid), retry once.
  fs::path aside = dir_ / "tmp" / ("stale." + unique_suffix());
  std::error_code ec2;
  fs::rename(entry, aside, ec2);
  fs::remove_all(aside, ec2);
  fs::rename(staging.path(), entry, ec);
  if (ec) throw std::system_error(ec, "publish " + entry.string());
  staging.release();
  return info;
}

FileLock CompileCache::lock(const std::string& key) const { return FileLock(dir_ / "locks" / (key + ".lock")); }

fs::path CompileCache::file_path(std::string_view kind, const std::string& name) const {
  return dir_ / std::string(kind) / name;
}

fs::path CompileCache::temp_file_path(const std::string& stem) const {
  return dir_ / "tmp" / (stem + "." + unique_suffix());
}

void CompileCache::publish_file(const fs::path& tmp, const fs::path& dest) const {
  fs::create_directories(dest.parent_path());
  fs::rename(tmp, dest);  // replaces atomically; identical content either way
}

}  // namespace kagent
