// The request's shared hold of the GPU's timing lock let go while the candidate works on the host
// alone, for one phase: the idle release (idle_lock_release.h) fed by CUPTI's callback at every
// CUDA call (profiler/cuda_call_hook.h), with what it did in the worker's log. The evaluation
// opens one per phase under the shared hold where KAGENT_GPU_IDLE_RELEASE_MS asks for it.
// Without the hook (another tool holds CUPTI's one subscriber: a candidate's torch.profiler,
// Nsight) no CUDA call would take the lock back: it is then held through the phase, never let go.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>

#include "profiler/cuda_call_hook.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/service/idle_lock_release.h"

namespace kagent::worker {

class HostWorkRelease {
 public:
  HostWorkRelease(GpuTimingLock& lock, std::chrono::milliseconds idle, const char* phase);
  ~HostWorkRelease();
  HostWorkRelease(const HostWorkRelease&) = delete;
  HostWorkRelease& operator=(const HostWorkRelease&) = delete;

  // Whether the lock may be let go in this phase (the hook sees every CUDA call).
  bool active() const { return release_.has_value(); }

 private:
  const char* phase_;
  std::optional<IdleLockRelease> release_;  // only with an active hook
  std::atomic<IdleLockRelease*> feeding_{nullptr};  // what the hook's calls reach, once release_ is made
  profiler::CudaCallHook hook_;  // last: destroyed first, so no call reaches a release that is gone
};

}  // namespace kagent::worker
