#include "worker/client/python_bytecode.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "common/fd.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "sandbox/scratch_dir.h"

namespace kagent {

namespace fs = std::filesystem;

namespace {

// Ours alone: owned by this user, writable by nobody else.
bool only_ours(const fs::path& folder) {
  struct stat st {};
  return ::lstat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

fs::path worker_bytecode_folder(const fs::path& cache_dir) {
  if (const char* dir = std::getenv("KAGENT_PYCACHE_DIR"); dir && *dir) return dir;
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (::geteuid() != 0 || sandbox::searchable_by_others(cache_dir.string())) return cache_dir / "pycache";
  return {};
}

bool ensure_worker_bytecode(const std::string& python, const fs::path& folder, std::chrono::milliseconds limit,
                            std::string* why) {
  const auto fail = [why](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  const fs::path marker = folder / "written-for";
  const std::string stamp = python + "\n" + kWorkerImports + "\n";
  try {
    if (read_file_or_empty(marker) == stamp && only_ours(folder)) return true;
    fs::create_directories(folder);
    ::chmod(folder.c_str(), 0755);  // readable by the sandbox's uid; a failure shows below
    if (!only_ours(folder)) return fail(folder.string() + " is not this user's alone");
    Fd lock(::open((folder / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock.get() < 0 || ::flock(lock.get(), LOCK_EX) != 0) return fail("cannot lock " + folder.string());
    if (read_file_or_empty(marker) == stamp) return true;  // another process wrote it meanwhile
    SpawnOptions so;
    // Readable by the sandbox's uid whatever this process's umask.
    so.argv = {python, "-c", std::string("import os; os.umask(0o022); ") + kWorkerImports};
    // torch makes its inductor folder in TMPDIR on import: a temporary one of its own, removed.
    const fs::path tmp = folder / (".tmp-" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    so.env_set = {"PYTHONPYCACHEPREFIX=" + folder.string(), "PYTHONDONTWRITEBYTECODE=", "TMPDIR=" + tmp.string()};
    so.nice = 10;  // beside workers that may be timing
    so.address_space_limit = std::uint64_t{24} << 30;  // torch's libraries, mapped, not CUDA
    const RunResult r = run_command(so, limit);
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (!r.succeeded())
      return fail(r.timed_out ? "importing torch to write its bytecode ran past its limit"
                              : "importing torch to write its bytecode failed: " + r.output.substr(0, 300));
    write_file_atomic(marker, stamp);
    return true;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace kagent
