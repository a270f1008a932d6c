// Lets go of the GPU's timing lock while the candidate's code works on the host alone (issue 46).
//
// A request holds the lock shared through the candidate's load, correctness and guards, so that
// no sibling worker times while this one may run kernels. A candidate whose first call spins on
// the host for 30 s (a policy's host loop) then keeps every sibling's timing waiting 30 s. This
// lets go once no CUDA call has come for `idle` and the device has finished what was queued,
// and takes the lock shared again at the next CUDA call, before that call proceeds:
//   - `on_cuda_call` comes at the entry of every CUDA runtime and driver call of the process
//     (profiler/cuda_call_hook.h), on whatever thread makes it;
//   - a watcher thread sees the quiet, marks it, synchronises the device without holding the
//     state's mutex (a CUDA call meanwhile cancels the release, and waits for nothing), then
//     lets go with no CUDA call under the mutex, so that a CUDA call blocked on the mutex inside
//     the driver can never wait on the watcher;
//   - the scope's end takes the lock shared again if it was let go: the request's code after it
//     finds the mode it left.
// The worker's own CUDA calls count as calls too: conservative, they run on the GPU.
// Plain C++ and a flock (no CUDA here): `sync_device` is passed in, so the rules are tested on
// the CPU with a real lock file.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

#include "worker/protocol/gpu_timing_lock.h"
#include "worker/protocol/idle_release_setting.h"

namespace kagent::worker {

// The worker's setting (worker/protocol/idle_release_setting.h), read once per worker; an invalid
// value is logged and the default taken.
std::chrono::milliseconds idle_release_from_environment();

class IdleLockRelease {
 public:
  // `lock` is held shared (the request's hold) and outlives this; `sync_device` waits for the
  // device (cudaDeviceSynchronize), from the watcher thread.
  IdleLockRelease(GpuTimingLock& lock, std::chrono::milliseconds idle, std::function<void()> sync_device);
  ~IdleLockRelease();  // the watcher stopped, the lock held shared again if it was let go
  IdleLockRelease(const IdleLockRelease&) = delete;
  IdleLockRelease& operator=(const IdleLockRelease&) = delete;

  // A CUDA call is starting on this thread: the lock is held shared before it returns (ignored on
  // the watcher's own thread).
  void on_cuda_call();

  int releases() const;          // times let go so far
  double released_seconds() const;  // time let go so far (up to now, if let go now)

 private:
  enum class State { Held, Releasing, Released };
  void watch(std::stop_token stop);

  GpuTimingLock& lock_;
  const std::chrono::milliseconds idle_;
  std::function<void()> sync_device_;
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  State state_ = State::Held;
  std::chrono::steady_clock::time_point last_call_;
  std::chrono::steady_clock::time_point released_at_{};
  std::chrono::steady_clock::duration released_{};
  int releases_ = 0;
  std::jthread watcher_;  // last: started once everything it reads is set
};

}  // namespace kagent::worker
