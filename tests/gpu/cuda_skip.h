// Whether this machine can run the GPU tests, and if not, why, in words a newcomer can act on.
// Every GPU test executable asks once, before any test runs (gpu_test_main.cpp): without a
// usable device it prints "SKIPPED: <reason>" and exits with kSkipExitCode, which ctest counts
// as skipped (SKIP_RETURN_CODE) and tests/skip_reasons.cmake lists after ctest's summary.
//
// The driver is asked directly (dlopen of libcuda), not through the CUDA runtime: without a
// driver the runtime answers "CUDA driver version is insufficient for CUDA runtime version",
// which sends a newcomer to upgrade a driver they do not have.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace kagent::testing {

inline constexpr int kSkipExitCode = 77;  // ctest's SKIP_RETURN_CODE for every GPU test

// Empty when the NVIDIA driver sees a CUDA device that this CUDA version can use; otherwise
// the reason, starting "no NVIDIA driver or device" or "NVIDIA driver too old for this CUDA runtime".
inline std::string no_device_reason() {
  struct Close {
    void operator()(void* h) const { ::dlclose(h); }
  };
  const std::unique_ptr<void, Close> lib(::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!lib) return "no NVIDIA driver or device: libcuda.so.1 (the NVIDIA driver) is not installed";
  using IntFn = CUresult (*)(int*);
  using InitFn = CUresult (*)(unsigned);
  using NameFn = CUresult (*)(CUresult, const char**);
  const auto driver_version = reinterpret_cast<IntFn>(::dlsym(lib.get(), "cuDriverGetVersion"));
  const auto init = reinterpret_cast<InitFn>(::dlsym(lib.get(), "cuInit"));
  const auto device_count = reinterpret_cast<IntFn>(::dlsym(lib.get(), "cuDeviceGetCount"));
  const auto error_name = reinterpret_cast<NameFn>(::dlsym(lib.get(), "cuGetErrorName"));
  if (!driver_version || !init || !device_count) return "no NVIDIA driver or device: libcuda.so.1 is not a CUDA driver";
  int version = 0;
  if (driver_version(&version) != CUDA_SUCCESS) version = 0;
  // Within one major version the runtime runs on an older driver (minor version compatibility).
  if (version / 1000 < CUDA_VERSION / 1000)
    return "NVIDIA driver too old for this CUDA runtime: the driver supports CUDA " + std::to_string(version / 1000) +
           "." + std::to_string(version % 1000 / 10) + ", kagent is built with CUDA " +
           std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string where = visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : std::string();
  if (const CUresult r = init(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (!error_name || error_name(r, &name) != CUDA_SUCCESS || !name) name = "unknown error";
    if (r == CUDA_ERROR_NO_DEVICE) return "no NVIDIA driver or device: the driver finds no CUDA device" + where;
    return std::string("no usable CUDA device: cuInit failed with ") + name + where;
  }
  int n = 0;
  if (device_count(&n) != CUDA_SUCCESS || n == 0) return "no NVIDIA driver or device: the driver finds no CUDA device" + where;
  return {};
}

}  // namespace kagent::testing
