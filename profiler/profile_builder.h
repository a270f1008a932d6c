// The profile JSON of one candidate: per-kernel table (time, share, launch configuration,
// resources, occupancy, waves, own or library, counters), totals, own share, DRAM traffic and
// achieved bandwidth against the GPU's measured peak, and a bound call with the numbers
// behind it. Pure: everything CUDA-side has been captured before (profile_capture.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/kernel_activity.h"
#include "profiler/occupancy.h"
#include "profiler/range_profiler.h"

namespace kagent::profiler {

// What the two profile phases measured on one candidate call.
struct ProfileCapture {
  std::vector<KernelRecord> records;  // activity trace of the traced call
  size_t dropped_records = 0;         // CUPTI had no buffer space (the trace is incomplete)
  RangeProfileResult counters;        // hardware metrics of a second call (may be unavailable)
  std::optional<DeviceLimits> limits; // for occupancy; absent when the device could not be queried
};

// What the worker knows about the candidate and the GPU.
struct ProfileContext {
  std::vector<std::string> own_kernels;  // the candidate's kernels (ptxas names); empty for kernelbench
  nlohmann::json device;                 // the worker's device JSON; measured_dram_gbps is the peak used
  int64_t io_bytes = 0;                  // inputs + weights + outputs of one call: traffic it cannot avoid
};

// The bound rule (Nsight Compute's speed-of-light reading): a unit at or above
// kBoundThresholdPct of its peak is the bottleneck; the busier of DRAM and SM decides between
// memory and compute; with both below, the kernel is latency bound (too little parallelism,
// dependent stalls, launch overhead or a partial wave keep either unit from saturating).
inline constexpr double kBoundThresholdPct = 50.0;

struct BoundCall {
  std::string kind;       // "memory", "compute", "latency"
  double dram_pct = 0;    // DRAM throughput, % of peak
  double sm_pct = 0;      // SM (compute) throughput, % of peak
  double issue_pct = 0;   // instruction issue slots busy, % (context for latency)
};

BoundCall classify_bound(double dram_pct, double sm_pct, double issue_pct);

nlohmann::json build_profile(const ProfileCapture& capture, const ProfileContext& context);

}  // namespace kagent::profiler
