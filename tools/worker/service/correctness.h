// The correctness trials of an evaluation: at least five, each on fresh inputs from a new
// seed; the candidate runs before the reference and again after it, each on its own copy of
// the inputs (a candidate that writes its inputs cannot corrupt the comparison); every output
// is compared for shape, dtype and values. One failing trial decides.
// A problem whose forward changes its model's plain tensor state (module_state.h) is seen in
// the first trial, on the reference: from then on every compared call of both sides starts
// from the state at construction, and the result says so (a stateful_module flag).
#pragma once

#include <functional>

#include "result/eval_result.h"
#include "worker/protocol/eval_options.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// Fills result.correctness and result.footprint_bytes (inputs + parameters + outputs of the
// problem); when wrong, also status, reason and message. Returns whether every trial passed.
// `between` runs between two trials (the evaluation's yield to a waiting timing).
bool check_correctness(ProblemSession& problem, Runner& candidate, Runner& reference, int64_t params_bytes,
                       const EvalOptions& opts, EvalResult& result, const std::string& device = "cuda",
                       const std::function<void()>& between = {});

}  // namespace kagent::worker
