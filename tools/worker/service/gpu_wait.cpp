#include "worker/service/gpu_wait.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cuda/cuda_error.h"

namespace kagent::worker {

namespace {

unsigned sched_flag(GpuWait w) {
  switch (w) {
    case GpuWait::Yield:
      return CU_CTX_SCHED_YIELD;
    case GpuWait::Block:
      return CU_CTX_SCHED_BLOCKING_SYNC;
    case GpuWait::Spin:
      break;
  }
  return CU_CTX_SCHED_SPIN;
}

}  // namespace

std::optional<std::string> GpuWaitSwitch::start(int device) {
  std::lock_guard lock(mu_);
  using DeviceGet = CUresult (*)(CUdevice*, int);
  const auto device_get = reinterpret_cast<DeviceGet>(cuda::driver_entry_point("cuDeviceGet"));
  state_ = reinterpret_cast<PrimaryState>(cuda::driver_entry_point("cuDevicePrimaryCtxGetState"));
  set_flags_ = reinterpret_cast<PrimarySetFlags>(cuda::driver_entry_point("cuDevicePrimaryCtxSetFlags"));
  started_ = true;
  std::optional<std::string> refused;
  if (!device_get || !state_ || !set_flags_) {
    state_ = nullptr;
    refused = refuse("the driver lacks cuDevicePrimaryCtxSetFlags");
  } else if (const CUresult e = device_get(&device_, device); e != CUDA_SUCCESS) {
    state_ = nullptr;
    refused = refuse("cuDeviceGet failed with CUDA driver error " + std::to_string(static_cast<int>(e)));
  } else if (outside_ != GpuWait::Spin) {
    refused = set(outside_);
    if (!refused)
      std::fprintf(stderr, "kagent-worker: %s=%s: waits for the GPU that way outside its timings\n", kGpuWaitEnv,
                   std::string(gpu_wait_name(outside_)).c_str());
  }
  return refused;
}

void GpuWaitSwitch::lock_changed(LockMode now) {
  if (outside_ == GpuWait::Spin) return;
  std::lock_guard lock(mu_);
  const bool exclusive = now == LockMode::Exclusive;
  if (!started_ || refused_ || exclusive == exclusive_) return;
  exclusive_ = exclusive;
  (void)set(exclusive ? GpuWait::Spin : outside_);
}

void GpuWaitSwitch::spin_for_good() {
  if (outside_ == GpuWait::Spin) return;
  std::lock_guard lock(mu_);
  if (!started_ || refused_) return;
  if (!exclusive_) (void)set(GpuWait::Spin);
  refused_ = true;
}

std::optional<std::string> GpuWaitSwitch::set(GpuWait w) {
  try {
    unsigned flags = 0;
    int active = 0;
    cuda::check(state_(device_, &flags, &active), "cuDevicePrimaryCtxGetState");
    cuda::check(set_flags_(device_, (flags & ~static_cast<unsigned>(CU_CTX_SCHED_MASK)) | sched_flag(w)),
                "cuDevicePrimaryCtxSetFlags");
    return std::nullopt;
  } catch (const std::exception& e) {
    return refuse(e.what());
  }
}

std::optional<std::string> GpuWaitSwitch::refuse(std::string why) {
  refused_ = true;  // spinning everywhere, as without the setting
  if (outside_ == GpuWait::Spin) return why;  // nothing was asked of the flags: nothing to say
  std::fprintf(stderr, "kagent-worker: %s=%s not applied, the worker spins as CUDA's default: %s\n", kGpuWaitEnv,
               std::string(gpu_wait_name(outside_)).c_str(), why.c_str());
  return why;
}

std::optional<unsigned> GpuWaitSwitch::current_flags() const {
  std::lock_guard lock(mu_);
  if (!state_) return std::nullopt;
  unsigned flags = 0;
  int active = 0;
  if (state_(device_, &flags, &active) != CUDA_SUCCESS) return std::nullopt;
  return flags & static_cast<unsigned>(CU_CTX_SCHED_MASK);
}

GpuWaitSwitch& process_gpu_wait() {
  // The setting is configuration, read once; kagent refused a wrong value before the worker started
  // (agent/cli/environment_settings.cpp), and a worker started by hand says so and spins.
  static GpuWaitSwitch the_switch([] {
    const char* text = std::getenv(kGpuWaitEnv);
    if (auto w = parse_gpu_wait(text)) return *w;
    std::fprintf(stderr, "kagent-worker: %s=%s is not spin, yield or block: spin taken\n", kGpuWaitEnv, text);
    return GpuWait::Spin;
  }());
  return the_switch;
}

}  // namespace kagent::worker
