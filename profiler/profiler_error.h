// The profiler's own failures (a failed CUDA or CUPTI call is a cuda::Error). Callers in the
// worker turn it into profile = {"error": ...}; it never changes a verdict.
#pragma once

#include <stdexcept>

namespace kagent::profiler {

struct ProfilerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kagent::profiler
