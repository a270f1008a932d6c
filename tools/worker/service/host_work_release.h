// The request's shared hold of the GPU's timing lock let go while the candidate works on the host
// alone, for one phase: the idle release (idle_lock_release.h) fed by CUPTI's callback at every
// CUDA call (profiler/cuda_call_hook.h), with what it did in the worker's log. The evaluation
// opens one per phase under the shared hold where KAGENT_GPU_IDLE_RELEASE_MS asks for it.
#pragma once

#include <chrono>

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

 private:
  const char* phase_;
  IdleLockRelease release_;
  profiler::CudaCallHook hook_;  // after release_: it calls into it until it is gone
};

}  // namespace kagent::worker
