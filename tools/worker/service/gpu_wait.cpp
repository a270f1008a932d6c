#include "worker/service/gpu_wait.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "cuda/cuda_error.h"

namespace kagent::worker {

namespace {

using DeviceGet = CUresult (*)(CUdevice*, int);
using PrimaryState = CUresult (*)(CUdevice, unsigned*, int*);
using PrimarySetFlags = CUresult (*)(CUdevice, unsigned);

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

struct Driver {
  DeviceGet device_get = nullptr;
  PrimaryState state = nullptr;
  PrimarySetFlags set_flags = nullptr;
};

Driver driver() {
  Driver d;
  d.device_get = reinterpret_cast<DeviceGet>(cuda::driver_entry_point("cuDeviceGet"));
  d.state = reinterpret_cast<PrimaryState>(cuda::driver_entry_point("cuDevicePrimaryCtxGetState"));
  d.set_flags = reinterpret_cast<PrimarySetFlags>(cuda::driver_entry_point("cuDevicePrimaryCtxSetFlags"));
  return d;
}

}  // namespace

std::optional<std::string> GpuWaitSwitch::start(int device) {
  std::lock_guard lock(mu_);
  device_ = device;
  if (outside_ == GpuWait::Spin) return std::nullopt;
  auto refused = set(outside_);
  if (!refused)
    std::fprintf(stderr, "kagent-worker: %s=%s: waits for the GPU that way outside its timings\n", kGpuWaitEnv,
                 std::string(gpu_wait_name(outside_)).c_str());
  return refused;
}

void GpuWaitSwitch::lock_changed(LockMode now) {
  if (outside_ == GpuWait::Spin) return;
  std::lock_guard lock(mu_);
  const bool exclusive = now == LockMode::Exclusive;
  if (device_ < 0 || refused_ || exclusive == exclusive_) return;
  exclusive_ = exclusive;
  (void)set(exclusive ? GpuWait::Spin : outside_);
}

void GpuWaitSwitch::spin_for_good() {
  if (outside_ == GpuWait::Spin) return;
  std::lock_guard lock(mu_);
  if (device_ < 0 || refused_) return;
  if (!exclusive_) (void)set(GpuWait::Spin);
  refused_ = true;
}

std::optional<std::string> GpuWaitSwitch::set(GpuWait w) {
  const Driver d = driver();
  std::string why;
  if (!d.device_get || !d.state || !d.set_flags) {
    why = "the driver lacks cuDevicePrimaryCtxSetFlags";
  } else {
    try {
      CUdevice dev{};
      cuda::check(d.device_get(&dev, device_), "cuDeviceGet");
      unsigned flags = 0;
      int active = 0;
      cuda::check(d.state(dev, &flags, &active), "cuDevicePrimaryCtxGetState");
      cuda::check(d.set_flags(dev, (flags & ~static_cast<unsigned>(CU_CTX_SCHED_MASK)) | sched_flag(w)),
                  "cuDevicePrimaryCtxSetFlags");
      return std::nullopt;
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  refused_ = true;  // spinning everywhere, as without the setting
  std::fprintf(stderr, "kagent-worker: %s=%s not applied, the worker spins as CUDA's default: %s\n", kGpuWaitEnv,
               std::string(gpu_wait_name(outside_)).c_str(), why.c_str());
  return why;
}

std::optional<unsigned> GpuWaitSwitch::current_flags() const {
  std::lock_guard lock(mu_);
  const Driver d = driver();
  if (!d.device_get || !d.state || device_ < 0) return std::nullopt;
  CUdevice dev{};
  unsigned flags = 0;
  int active = 0;
  if (d.device_get(&dev, device_) != CUDA_SUCCESS || d.state(dev, &flags, &active) != CUDA_SUCCESS) return std::nullopt;
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
