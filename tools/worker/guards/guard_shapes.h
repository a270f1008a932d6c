// Guard shape_generalization: a kernel with the problem's sizes baked in (a fixed grid, a
// constant row length) passes every trial, since all trials share get_inputs()'s shapes. The
// candidate must also match the reference on other input sizes: the problem's own
// get_extra_inputs() when it has one, else sizes derived by rebinding the module-level
// integers that only get_inputs() reads (kagent_worker/shapes.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "checker/tolerance.h"
#include "result/eval_result.h"
#include "worker/python/python_runtime.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// nullopt when the candidate gets every extra set right. No set to run (sizes that cannot be
// varied, a failing get_extra_inputs()) is a flag saying why; the candidate's wrong answer or
// failure on a set is a reject naming the sizes. cuda::ContextLost passes through.
std::optional<GuardFinding> check_extra_shapes(PythonRuntime& py, ProblemSession& problem, PyObject* reference_model,
                                               Runner& candidate, Runner& reference, int64_t seed,
                                               const ToleranceConfig& tolerance);

}  // namespace kagent::worker
