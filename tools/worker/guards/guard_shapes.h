// Guard shape_generalization: a kernel with the problem's sizes baked in (a fixed grid, a
// constant row length) passes every trial, since all trials share get_inputs()'s shapes. A
// problem may define get_extra_inputs() returning further input lists, usually with other
// shapes; the candidate must match the reference on each of them too.
#pragma once

#include <cstdint>
#include <optional>

#include "checker/tolerance.h"
#include "result/eval_result.h"
#include "worker/service/problem_session.h"
#include "worker/python/python_runtime.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// nullopt when the problem has no extra inputs or the candidate gets them all right. A failure
// of the problem's own get_extra_inputs() or of the reference on them is a flag (the check did
// not happen), the candidate's failure or exception a reject. cuda::ContextLost passes through.
std::optional<GuardFinding> check_extra_shapes(PythonRuntime& py, ProblemSession& problem, Runner& candidate,
                                               Runner& reference, int64_t seed, const ToleranceConfig& tolerance);

}  // namespace kagent::worker
