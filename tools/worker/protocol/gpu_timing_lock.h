// The GPU's timing lock: every kagent worker on a GPU, of this process or another, takes it
// SHARED for the GPU work that may overlap (problem loads, correctness, guards) and EXCLUSIVE
// for what is timed (the candidate's timing, the baselines, the profile, the DRAM bandwidth),
// so that two workers per GPU overlap everything but their timings, and every timing still has
// the GPU to itself. A flock on one file per GPU UUID, beside the memory ledger
// (gpu_admission.h's folder):
//   - one open file description per worker (this class): flock converts shared to exclusive by
//     letting go first, so two workers that both want exclusive never deadlock; two descriptions
//     in one process would wait on each other;
//   - the worker's kernels are asynchronous: `before_release` (the worker's device
//     synchronisation) runs before the lock is let go or converted, so nothing of ours still
//     runs once a sibling may time;
//   - the orchestrator creates the file (mode 0666, folder 01777); the sandboxed worker only
//     opens it read-only (flock needs no write access; the sandbox refuses opens for writing);
//   - a worker that waits says so (`waiting`, then `held` with the seconds), so that the
//     orchestrator's watchdog does not count a sibling's timing against this candidate;
//   - fair to the exclusive: flock lets a new shared holder in while an exclusive one waits, so a
//     stream of overlapping loads and correctness checks could keep a timing out for good. Every
//     taking goes through a turnstile first (a second file, `<lock>.turnstile`, held exclusively
//     only while the lock itself is taken): an exclusive waiter holds the turnstile until the
//     shared holders of the moment are gone, and the ones that come after queue behind it. Nobody
//     waits for the turnstile while holding the lock, so the two cannot deadlock. Among waiters
//     the kernel wakes them in no set order; each wait is bounded by the holders ahead (whose
//     phases have budgets), not by the ones that come later. A shared taker waits for the
//     turnstile at most `turnstile_patience` (5 s), then takes the lock beside the waiter: when
//     the waiter is stuck behind one long shared holder (a candidate's 30 s first call), queueing
//     every load and correctness check behind it too would stall the whole GPU.
// Plain C++ (no CUDA): the orchestrator names and creates the file, the worker takes it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fd.h"

namespace kagent {

enum class LockMode { None, Shared, Exclusive };
std::string_view lock_mode_name(LockMode m);  // "none" | "shared" | "exclusive"
std::optional<LockMode> lock_mode_from_name(std::string_view name);

// The lock file of the GPU with this UUID in `folder`.
std::string gpu_timing_lock_path(const std::string& folder, const std::string& uuid);
// The turnstile beside a lock file (made with it by create_gpu_timing_locks).
std::string gpu_timing_turnstile_path(const std::string& lock_path);
// Creates the lock files of these GPUs (and the folder) where missing, readable by every user,
// as the orchestrator does before it starts a worker. Best effort: returns the paths that exist.
std::vector<std::string> create_gpu_timing_locks(const std::string& folder, const std::vector<std::string>& uuids);

// The environment variable that tells the worker the folder (set by WorkerClient).
inline constexpr const char* kTimingLockDirEnv = "KAGENT_GPU_TIMING_LOCK_DIR";
// The UUID of the GPU a replacement worker is started for (set by WorkerClient once a worker
// named it): that worker joins the GPU's lock before CUDA starts (worker_service.h).
inline constexpr const char* kTimingLockUuidEnv = "KAGENT_GPU_TIMING_LOCK_UUID";

class GpuTimingLock {
 public:
  struct Hooks {
    std::function<void()> before_release;               // leaving a held mode: synchronise the device
    std::function<void(LockMode wanted)> waiting;       // the lock is taken elsewhere: about to block
    std::function<void(LockMode now, double waited_s)> changed;  // after every change of mode
    std::function<void(const std::string& why)> broken;  // flock failed: from now on, unlocked
  };

  // The lock file at `path`, opened read-only; nullopt when it cannot be opened (missing).
  static constexpr std::chrono::milliseconds kTurnstilePatience{5000};
  static std::optional<GpuTimingLock> open(const std::string& path, Hooks hooks = {},
                                           std::chrono::milliseconds turnstile_patience = kTurnstilePatience);

  GpuTimingLock(GpuTimingLock&&) noexcept = default;
  GpuTimingLock& operator=(GpuTimingLock&&) noexcept = default;
  ~GpuTimingLock();  // lets go (with before_release); closing the fd would drop the flock anyway

  // Blocks until the lock is held in `mode` (None lets go). Never throws: a flock that fails
  // calls `broken` and leaves the lock unlocked for good (the orchestrator then watches the GPU
  // as it would without a lock).
  void set(LockMode mode);
  // Lets go without `before_release`, for a caller that has synchronised the device itself and
  // knows nothing of this process was queued since (the worker's idle release, which must make
  // no CUDA call while CUDA calls wait on it: worker/service/idle_lock_release.h).
  void let_go_synchronised();
  // Whether an exclusive taker waits for the shared holders of the moment to go (it holds the
  // turnstile while it waits; a shared taker holds it only for the instant of its taking, or
  // while an exclusive holder times, which cannot be while this worker holds it shared).
  bool exclusive_waiting() const;
  // Between two steps of shared work that leave nothing of ours queued on the GPU worth keeping
  // (the evaluation's phase boundaries): where an exclusive taker waits, lets go (with
  // `before_release`) and takes the lock shared again behind it. A timing then waits for the
  // step in progress, not for the rest of the request's shared work. Returns whether it yielded.
  bool yield_to_exclusive();
  LockMode mode() const { return mode_; }
  bool broken() const { return broken_; }
  double waited_seconds() const { return waited_; }  // every wait so far
  const std::string& path() const { return path_; }
  // The descriptor, for the worker's Python: it lets go of the shared hold while torch builds an
  // extension for a minute (kagent_worker/inline_patch.py) and takes it shared again after.
  int fd() const { return fd_.get(); }
  // The turnstile's descriptor (-1: none, a lock file made before turnstiles), which the same
  // Python takes around its taking of the lock again.
  int turnstile_fd() const { return turnstile_.get(); }
  std::chrono::milliseconds turnstile_patience() const { return turnstile_patience_; }

  // Holds `mode` for a scope, then goes back to the mode before it. Upgrades only: a scope that
  // asks for less than is held keeps what is held.
  class Hold {
   public:
    Hold(GpuTimingLock* lock, LockMode mode) : Hold(lock, mode, true) {}  // lock may be null: nothing held
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   protected:
    Hold(GpuTimingLock* lock, LockMode mode, bool upgrade_only);

   private:
    GpuTimingLock* lock_;
    LockMode before_ = LockMode::None;
  };

  // Lets go for a scope of CPU work that touches no GPU (torch.compile's compile, a problem's
  // CPU construction), so that siblings time meanwhile; takes back what was held after it (a
  // wait that is announced, as any).
  class Release : public Hold {
   public:
    explicit Release(GpuTimingLock* lock) : Hold(lock, LockMode::None, false) {}  // lock may be null
  };

 private:
  GpuTimingLock(Fd fd, Fd turnstile, std::string path, Hooks hooks, std::chrono::milliseconds turnstile_patience);
  // Takes `op` (LOCK_SH or LOCK_EX) through the turnstile; nothing held on entry. Returns the
  // seconds waited, or a negative value with errno set when a flock failed.
  double take(int op, LockMode mode);
  Fd fd_;
  Fd turnstile_;
  std::string path_;
  Hooks hooks_;
  std::chrono::milliseconds turnstile_patience_;
  LockMode mode_ = LockMode::None;
  bool broken_ = false;
  double waited_ = 0;
};

}  // namespace kagent
