// The one way kagent checks a CUDA runtime, CUDA driver or CUPTI return code: a failure
// throws cuda::Error naming the call, where it was made and the API's own words; a code
// that leaves the CUDA context unusable (an illegal address, a kernel assert, ...) throws
// cuda::ContextLost, after which the process must be replaced. Used by the timer, the
// worker and the profiler alike.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>

namespace kagent::cuda {

enum class Api { Runtime, Driver, Cupti };

class Error : public std::runtime_error {
 public:
  Error(Api api, int code, const std::string& what) : std::runtime_error(what), api_(api), code_(code) {}
  Api api() const { return api_; }
  int code() const { return code_; }  // the cudaError_t, CUresult or CUptiResult value

 private:
  Api api_;
  int code_;
};

// A sticky error: every later CUDA call in this process fails too.
struct ContextLost : Error {
  using Error::Error;
};

bool is_sticky(cudaError_t e);

// A CUDA driver function through the runtime, so that nothing links libcuda.so (absent on
// machines without a driver, where the CPU tests still load these libraries); nullptr when the
// driver lacks it (the runtime's error is cleared).
void* driver_entry_point(const char* symbol);

// "CUPTI_ERROR_X: <CUPTI's description>".
std::string cupti_message(CUptiResult result);

void check(cudaError_t e, const char* call, std::source_location where = std::source_location::current());
void check(CUresult e, const char* call, std::source_location where = std::source_location::current());
void check(CUptiResult e, const char* call, std::source_location where = std::source_location::current());

}  // namespace kagent::cuda

// KAGENT_CUDA_CHECK(cudaMalloc(...)), KAGENT_CUDA_CHECK(cuptiProfilerInitialize(...)), ...
#define KAGENT_CUDA_CHECK(expr) ::kagent::cuda::check((expr), #expr)
