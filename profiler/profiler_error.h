// The one exception type of the profiler: CUPTI or CUDA refused something. Callers in the
// worker turn it into profile = {"error": ...}; it never changes a verdict.
#pragma once

#include <stdexcept>

namespace kagent::profiler {

struct ProfilerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kagent::profiler
