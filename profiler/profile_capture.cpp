#include "profiler/profile_capture.h"

#include <cuda_runtime_api.h>

#include "cuda/cuda_error.h"

namespace kagent::profiler {

ProfileCapture capture_profile(const std::function<void()>& run_once, const std::function<void()>& before_call,
                               const CaptureOptions& options, RangeProfiler* counters) {
  ProfileCapture cap;
  {
    KernelActivity activity;
    if (before_call) before_call();
    activity.start();  // synchronises first, so before_call's own kernels stay out of the trace
    run_once();
    cap.records = activity.stop();
    cap.dropped_records = activity.dropped();
  }  // activity tracing off before the counters: the two never run together

  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess) {
    try {
      cap.limits = device_limits(device);
    } catch (const cuda::Error&) {
      // occupancy is left out; the rest of the profile stands
    }
  } else {
    (void)cudaGetLastError();
  }

  if (options.counters) {
    // The traced call's launches size the counters' image; the two calls launch the same kernels.
    const size_t launches = cap.records.size();
    cap.counters = counters ? counters->profile(run_once, before_call, launches)
                            : profile_ranges(run_once, before_call, options.range, launches);
  } else {
    cap.counters.status = "off";
    cap.counters.reason = "hardware counters not requested";
  }
  return cap;
}

}  // namespace kagent::profiler
