// measure_cold: time a runner on the GPU the way the verdict needs it (docs/evaluation.md,
// "Evaluation method"): warm-up, L2 flushed before every iteration, CUDA events, samples
// until the stopping criterion is satisfied, device-wide completion.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "result/eval_result.h"
#include "timer/l2_flush.h"
#include "timer/measure_config.h"
#include "timer/stopping_criterion.h"

namespace kagent {

// StdRelCriterion(min_samples, min_time_s, max_noise), IqrNoiseCriterion (the same three) or
// CapCriterion(max_iterations, max_time_s), whichever finishes first.
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureConfig& cfg);

// Times `run` on the current CUDA device. Per iteration: flush L2 on torch's current stream
// and wait for it (the timed region starts with an idle device), hold that stream, record the start event on
// that stream, run(), record the end event on the legacy default stream (which waits for
// every blocking stream, and the current stream is joined to it), wait for it, then
// cudaDeviceSynchronize. The event time feeds the statistics and the criterion; the host
// wall time from just before the start event to device-wide completion gives
// host_median_ms, which also covers work hidden on non-blocking side streams, so a large
// gap between the two flags such a candidate.
// cfg.sample (measure_config.h): Launch (the default) times as above, the event time including
// the host-side launch latency of run()'s first kernel, as KernelBench's harness does. Gpu and
// Steady hold the stream (timer/launch_hold.h) from before the start event until run() has
// issued its work: the sample is the GPU's time for the call (Steady: or the host's time to issue
// it, issue_median_ms, where that is longer). A call that waits for the GPU inside run() outlasts
// the hold (twice in warm-up, or once while sampling) and is timed from then on with the launch
// latency included (TimingStats::launch_latency says which).
// `flush` (optional) lets a caller reuse one flush buffer (made on the current device)
// across measurements.
// Throws std::runtime_error on any CUDA error; exceptions from run() propagate.
TimingStats measure_cold(const std::function<void()>& run, const MeasureConfig& cfg = {}, L2Flush* flush = nullptr);

// Same loop with a caller-made criterion (cfg's criterion fields are then unused).
TimingStats measure_cold(const std::function<void()>& run, const MeasureConfig& cfg, StoppingCriterion& criterion,
                         L2Flush* flush = nullptr);

}  // namespace kagent
