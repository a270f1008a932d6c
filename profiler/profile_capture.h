// The CUDA side of the profile phase: one traced call of the candidate (kernel activity),
// then the hardware counters over one more call, then the device's limits for occupancy.
// Kept apart from timing; build_profile turns the capture into the profile JSON.
#pragma once

#include <functional>

#include "profiler/profile_builder.h"
#include "profiler/range_profiler.h"

namespace kagent::profiler {

struct CaptureOptions {
  bool counters = true;  // run the range profiler after the trace
  RangeProfilerOptions range;
};

// `run_once` calls the candidate once; `before_call` (e.g. an L2 flush, may be empty) runs
// before each profiled call, outside the traced window. `counters`: a RangeProfiler kept by
// the caller across candidates (its host-side setup is reused), or null for a fresh one with
// options.range. Throws cuda::Error when kernel activity cannot be traced; counter failures
// come back in capture.counters; exceptions from run_once pass through.
ProfileCapture capture_profile(const std::function<void()>& run_once, const std::function<void()>& before_call,
                               const CaptureOptions& options = {}, RangeProfiler* counters = nullptr);

}  // namespace kagent::profiler
