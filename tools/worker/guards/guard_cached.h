// Guard cached_results: a candidate that computes on its first calls and then serves a kept
// result (keyed on the input pointer, or on a call count past the correctness trials) passes
// every trial and times at nothing. After timing, the very input tensors the timer used get
// fresh values written in place (same pointers, same shapes) and forward runs once more: its
// outputs must match the reference on the new values.
#pragma once

#include <cstdint>
#include <optional>

#include "checker/tolerance.h"
#include "result/eval_result.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// `timing_inputs` are overwritten. nullopt when the outputs match (or no input could be
// rewritten in place: all scalars, or get_inputs() changes shape with the seed).
std::optional<GuardFinding> check_fresh_values(ProblemSession& problem, Runner& candidate, Runner& reference,
                                               Values& timing_inputs, int64_t seed, const ToleranceConfig& tolerance);

}  // namespace kagent::worker
