#include "worker/protocol/gpu_timing_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace kagent {

namespace fs = std::filesystem;

std::string_view lock_mode_name(LockMode m) {
  switch (m) {
    case LockMode::None: return "none";
    case LockMode::Shared: return "shared";
    case LockMode::Exclusive: return "exclusive";
  }
  return "none";
}

std::optional<LockMode> lock_mode_from_name(std::string_view name) {
  for (LockMode m : {LockMode::None, LockMode::Shared, LockMode::Exclusive})
    if (lock_mode_name(m) == name) return m;
  return std::nullopt;
}

std::string gpu_timing_lock_path(const std::string& folder, const std::string& uuid) {
  return (fs::path(folder) / ((uuid.empty() ? std::string("gpu") : uuid) + ".timing")).string();
}

std::string gpu_timing_turnstile_path(const std::string& lock_path) { return lock_path + ".turnstile"; }

std::vector<std::string> create_gpu_timing_locks(const std::string& folder, const std::vector<std::string>& uuids) {
  std::vector<std::string> made;
  if (uuids.empty()) return made;
  std::error_code ec;
  if (!fs::exists(folder, ec)) {
    fs::create_directories(folder, ec);
    ::chmod(folder.c_str(), 01777);  // every user's kagent meets here, as in /tmp
  }
  for (const auto& uuid : uuids) {
    const std::string path = gpu_timing_lock_path(folder, uuid);
    Fd fd(::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666));
    if (!fd) continue;
    ::fchmod(fd.get(), 0666);  // the worker's own uid (the sandbox's) opens it too
    const std::string turnstile = gpu_timing_turnstile_path(path);
    if (Fd t(::open(turnstile.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666)); t) ::fchmod(t.get(), 0666);
    made.push_back(path);
  }
  return made;
}

std::optional<GpuTimingLock> GpuTimingLock::open(const std::string& path, Hooks hooks,
                                                 std::chrono::milliseconds turnstile_patience) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  Fd turnstile(::open(gpu_timing_turnstile_path(path).c_str(), O_RDONLY | O_CLOEXEC));  // missing: no fairness
  return GpuTimingLock(std::move(fd), std::move(turnstile), path, std::move(hooks), turnstile_patience);
}

GpuTimingLock::GpuTimingLock(Fd fd, Fd turnstile, std::string path, Hooks hooks,
                             std::chrono::milliseconds turnstile_patience)
    : fd_(std::move(fd)), turnstile_(std::move(turnstile)), path_(std::move(path)), hooks_(std::move(hooks)),
      turnstile_patience_(turnstile_patience) {}

double GpuTimingLock::take(int op, LockMode mode) {
  const auto start = std::chrono::steady_clock::now();
  bool announced = false;
  const auto say_waiting = [&] {  // once per taking
    if (!announced && hooks_.waiting) hooks_.waiting(mode);
    announced = true;
  };
  // Blocks on `fd` for `lock_op`, saying once that this worker waits.
  const auto acquire = [&](int fd, int lock_op) {
    if (::flock(fd, lock_op | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    say_waiting();
    while (::flock(fd, lock_op) != 0)
      if (errno != EINTR) return false;
    return true;
  };
  bool turnstile = static_cast<bool>(turnstile_);
  if (turnstile && op == LOCK_SH) {
    // A shared taker waits for the turnstile only so long (gpu_timing_lock.h): flock has no
    // timed wait, so it looks every 10 ms.
    const auto give_up = start + turnstile_patience_;
    for (;;) {
      if (::flock(turnstile_.get(), LOCK_EX | LOCK_NB) == 0) break;
      if (errno != EWOULDBLOCK && errno != EINTR) return -1;
      if (std::chrono::steady_clock::now() >= give_up) {
        turnstile = false;  // beside the stuck waiter
        break;
      }
      say_waiting();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  } else if (turnstile && !acquire(turnstile_.get(), LOCK_EX)) {
    return -1;
  }
  const bool held = acquire(fd_.get(), op);
  const int saved = errno;
  if (turnstile) ::flock(turnstile_.get(), LOCK_UN);
  errno = saved;
  if (!held) return -1;
  return announced ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() : 0.0;
}

GpuTimingLock::~GpuTimingLock() {
  if (fd_) set(LockMode::None);
}

void GpuTimingLock::set(LockMode mode) {
  if (broken_ || !fd_ || mode == mode_) return;
  // Our kernels finish before a sibling may time: a conversion lets go first, as an unlock does.
  if (mode_ != LockMode::None && hooks_.before_release) hooks_.before_release();
  const auto fail = [&](const char* what) {
    const std::string why = fmt::format("flock({}) on {}: {}", what, path_, std::strerror(errno));
    broken_ = true;
    mode_ = LockMode::None;
    ::flock(fd_.get(), LOCK_UN);
    if (hooks_.broken) hooks_.broken(why);
  };
  if (mode == LockMode::None) {
    if (::flock(fd_.get(), LOCK_UN) != 0) return fail("unlock");
    mode_ = mode;
    if (hooks_.changed) hooks_.changed(mode_, 0);
    return;
  }
  const int op = mode == LockMode::Exclusive ? LOCK_EX : LOCK_SH;
  // A change between held modes lets go first (flock's conversion does too, not atomically):
  // holding the lock while waiting for the turnstile could deadlock with an exclusive waiter
  // that holds the turnstile and waits for us. The synchronisation above made that safe.
  if (mode_ != LockMode::None) {
    if (::flock(fd_.get(), LOCK_UN) != 0) return fail("unlock");
    mode_ = LockMode::None;
  }
  const double waited = take(op, mode);
  if (waited < 0) return fail(lock_mode_name(mode).data());
  waited_ += waited;
  mode_ = mode;
  if (hooks_.changed) hooks_.changed(mode_, waited);
}

void GpuTimingLock::let_go_synchronised() {
  std::function<void()> sync = std::exchange(hooks_.before_release, nullptr);
  set(LockMode::None);
  hooks_.before_release = std::move(sync);
}

bool GpuTimingLock::exclusive_waiting() const {
  if (!turnstile_ || broken_) return false;
  if (::flock(turnstile_.get(), LOCK_EX | LOCK_NB) == 0) {
    ::flock(turnstile_.get(), LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

bool GpuTimingLock::yield_to_exclusive() {
  if (mode_ != LockMode::Shared || !exclusive_waiting()) return false;
  set(LockMode::None);
  set(LockMode::Shared);  // through the turnstile: behind the waiter, as any taker that comes now
  return true;
}

GpuTimingLock::Hold::Hold(GpuTimingLock* lock, LockMode mode, bool upgrade_only) : lock_(lock) {
  if (!lock_) return;
  before_ = lock_->mode();
  if (mode == before_ || (upgrade_only && static_cast<int>(mode) < static_cast<int>(before_))) {
    lock_ = nullptr;  // already held as asked (or, for an upgrade, more strongly): nothing to put back
    return;
  }
  lock_->set(mode);
}

GpuTimingLock::Hold::~Hold() {
  if (lock_) lock_->set(before_);
}

}  // namespace kagent
