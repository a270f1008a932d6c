// measure_cold: time a runner on the GPU the way the verdict needs it (DESIGN.md,
// "Evaluation method"): warm-up, L2 flushed before every iteration, CUDA events, samples
// until the stopping criterion is satisfied, device-wide completion.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "result/eval_result.h"
#include "timer/l2_flush.h"
#include "timer/stopping_criterion.h"

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
};

// StdRelCriterion(min_samples, min_time_s, max_noise) or CapCriterion(max_iterations, max_time_s).
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureConfig& cfg);

// Times `run` on the current CUDA device. Per iteration: flush L2 on torch's current stream
// and wait for it (the timed region starts with an idle device), record the start event on
// that stream, run(), record the end event on the legacy default stream (which waits for
// every blocking stream, and the current stream is joined to it), wait for it, then
// cudaDeviceSynchronize. The event time feeds the statistics and the criterion; the host
// wall time from just before the start event to device-wide completion gives
// host_median_ms, which also covers work hidden on non-blocking side streams, so a large
// gap between the two flags such a candidate.
// Event time includes the host-side launch latency of run()'s first kernel, for the
// reference and the candidate alike (KernelBench measures the same way).
// `flush` (optional) lets a caller reuse one flush buffer (made on the current device)
// across measurements.
// Throws std::runtime_error on any CUDA error; exceptions from run() propagate.
TimingStats measure_cold(const std::function<void()>& run, const MeasureConfig& cfg = {}, L2Flush* flush = nullptr);

// Same loop with a caller-made criterion (cfg's criterion fields are then unused).
TimingStats measure_cold(const std::function<void()>& run, const MeasureConfig& cfg, StoppingCriterion& criterion,
                         L2Flush* flush = nullptr);

}  // namespace kagent
