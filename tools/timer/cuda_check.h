// Every CUDA runtime call in the timer goes through KAGENT_CUDA_CHECK: a failure throws
// std::runtime_error naming the call, file:line and the CUDA error, so the worker can
// classify it instead of timing garbage.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace kagent {

inline void cuda_check(cudaError_t err, const char* what = "CUDA call",
                       std::source_location where = std::source_location::current()) {
  if (err == cudaSuccess) return;
  // Clear a non-sticky error so the next call does not report this one again.
  (void)cudaGetLastError();
  throw std::runtime_error(std::string(where.file_name()) + ":" + std::to_string(where.line()) + ": " + what +
                           " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

}  // namespace kagent

#define KAGENT_CUDA_CHECK(expr) ::kagent::cuda_check((expr), #expr)
