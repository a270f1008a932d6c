// How this worker's threads wait for the GPU: CUDA's scheduling flags of the process's primary
// context, switched in place (cuDevicePrimaryCtxSetFlags takes an active context since CUDA 12).
// In an exclusive hold of the GPU's timing lock the worker spins, as CUDA does by default with one
// context per process, so a timing's host latency is what it was; elsewhere it waits as
// KAGENT_GPU_WAIT says (worker/protocol/gpu_wait_setting.h). With `spin`, the default, the flags
// are never touched.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include <cuda.h>

#include "worker/protocol/gpu_timing_lock.h"
#include "worker/protocol/gpu_wait_setting.h"

namespace kagent::worker {

class GpuWaitSwitch {
 public:
  explicit GpuWaitSwitch(GpuWait outside) : outside_(outside) {}
  GpuWaitSwitch(const GpuWaitSwitch&) = delete;
  GpuWaitSwitch& operator=(const GpuWaitSwitch&) = delete;

  // Once CUDA has started on `device` (the runtime's ordinal): the flags for outside a timing.
  // Before it, lock_changed does nothing. Returns what was refused, if anything (logged once).
  std::optional<std::string> start(int device);
  // The lock's new mode (its `changed` hook). Only entering and leaving Exclusive switch, and
  // both happen on the thread that serves requests (worker_service.cpp, evaluation.cpp); the
  // idle release's thread only moves a shared hold, which touches no CUDA here.
  void lock_changed(LockMode now);

  // The lock broke (unlocked from now on): spin, as without the setting, and switch no more.
  void spin_for_good();

  // The scheduling flags the primary context has now (CU_CTX_SCHED_*), for tests and logs.
  std::optional<unsigned> current_flags() const;

 private:
  std::optional<std::string> set(GpuWait w);     // under mu_, once started
  std::optional<std::string> refuse(std::string why);  // logs it; no more switching

  // The driver's functions, found once at start (twice an evaluation would be on its path).
  using PrimaryState = CUresult (*)(CUdevice, unsigned*, int*);
  using PrimarySetFlags = CUresult (*)(CUdevice, unsigned);

  const GpuWait outside_;
  mutable std::mutex mu_;
  bool started_ = false;
  CUdevice device_{};
  PrimaryState state_ = nullptr;
  PrimarySetFlags set_flags_ = nullptr;
  bool exclusive_ = false;
  bool refused_ = false;  // the driver said no once: the flags are left as they are
};

// The process's one switch (the flags are the process's primary context's), from KAGENT_GPU_WAIT.
GpuWaitSwitch& process_gpu_wait();

}  // namespace kagent::worker
