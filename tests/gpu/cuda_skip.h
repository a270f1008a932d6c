// For GPU tests that use CUDA in their own process: skip, saying why, where no device is usable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include <ATen/Context.h>

namespace kagent::testing {

// Empty when a CUDA device is usable from libtorch, else why not.
inline std::string no_cuda_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
  }
  if (n == 0) return "cudaGetDeviceCount found 0 devices";
  if (!at::hasCUDA()) return "libtorch was loaded without its CUDA backend";
  return {};
}

// Prints "SKIPPED: no CUDA device (<reason>)" and returns true when there is none.
inline bool skip_without_gpu() {
  const std::string why = no_cuda_reason();
  if (why.empty()) return false;
  std::printf("SKIPPED: no CUDA device (%s)\n", why.c_str());
  return true;
}

}  // namespace kagent::testing
