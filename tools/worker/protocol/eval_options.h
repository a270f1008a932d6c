// EvalOptions: how the worker evaluates a candidate (trials, tolerances, timing, baselines,
// guards, profile). Built in one place on the orchestrator's side (tools/evaluation), sent
// whole with every request, read by the worker; every field is written out, so both sides
// key the baseline cache on the same values.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "checker/tolerance_config.h"
#include "result/policy.h"
#include "timer/measure_config.h"
#include "worker/protocol/guard_options.h"

namespace kagent {

struct EvalOptions {
  int trials = 5;               // fresh-seed correctness trials (at least 5 by design; fewer only on request)
  int64_t seed = 42;            // weights and timing inputs; the trials' seeds are drawn from it as KernelBench does
  ToleranceConfig tolerance;    // preset (kernelbench-v0.1 | kernelbench-2025) and overrides
  Policy policy = Policy::KernelBench;  // whose verdict is the result's status; both are recorded
  bool measure = true;          // time the candidate when it is correct
  bool eager_baseline = true;
  bool compiled_baseline = true;
  MeasureConfig timing;
  std::string cache_dir;        // baselines are cached under cache_dir/baselines
  worker::GuardOptions guards;  // reward-hack guards
  bool profile = true;          // CUPTI profile phase after timing a correct candidate
  // Paired rounds of eager and the candidate after the timing, for a candidate under 1 ms: the
  // speedup's interval (result/speedup_rounds.h). 0: none; else 2 to kMaxSpeedupRounds.
  int speedup_rounds = 0;
};
inline constexpr int kMaxSpeedupRounds = 20;
// The rounds run for a candidate under this median: a kernel of 1 ms or more repeats within 1%
// between evaluations already (docs/evaluation.md, "Timing"), and its rounds would cost seconds.
inline constexpr double kSpeedupRoundsBelowMs = 1.0;

// Absent members keep their defaults; throws std::invalid_argument for a bad guard option, an
// unknown policy or a number of speedup rounds out of range.
void to_json(nlohmann::json& j, const EvalOptions& o);
void from_json(const nlohmann::json& j, EvalOptions& o);

}  // namespace kagent
