// How measure_cold times a runner: warm-up, sample counts and the stopping rule's limits.
// Plain data: it travels in the worker protocol's EvalOptions and keys the baseline cache.
#pragma once

#include <cstdint>

namespace kagent {

// Defaults aim at: a kernel's median stable within ~2% across repeated evaluations, and
// one measurement of a level-1 problem costing ~0.2-0.4 s wall, so reference + candidate
// stay well under 3 s even for a noisy kernel (max_time_s bounds each measurement).
struct MeasureConfig {
  int warmup_runs = 3;          // untimed runs first: lazy module loading, cuBLAS handles,
  double warmup_time_s = 0.05;  // allocator growth, GPU clock ramp-up (both minimums)
  int64_t min_samples = 20;     // enough for a median that does not move with one outlier
  double min_time_s = 0.1;      // wall time of the timed loop before noise may stop it
  double max_noise = 0.01;      // target relative stdev of the samples
  double max_time_s = 1.0;      // hard cap on the timed loop's wall time (also bounds warm-up)
  int64_t max_iterations = 5000;
  bool flush_l2 = true;
  // Hold the stream until the call is issued (timer/launch_hold.h): a sample is then the GPU's
  // time for the call, or the host's time to issue it where that is longer. Off: the host's
  // launch latency is part of every sample, as in KernelBench's harness (and noisier for it).
  bool hide_launch_latency = true;
};

}  // namespace kagent
