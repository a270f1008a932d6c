// A reference that fails during an evaluation in which a candidate has loaded: whose failure is
// it? The reference is the problem's, trusted; if it fails only beside the candidate, the
// candidate changed something it depends on (torch's default dtype or device, a function it
// patched, a mode it left active) and the failure is the candidate's runtime_error
// (reference_broken_by_candidate), not kagent's internal_error (reference_failed).
//
// The check, after the failure: the worker's Python state is put back as captured before the
// request (worker_state.h: what differed is what the candidate changed), then the reference
// runs alone, as a fresh model on the very inputs it failed on. It passing there is the proof;
// failing again leaves the verdict kagent's (and the client's retry on a fresh worker, where a
// candidate ran before).
#pragma once

#include <optional>
#include <string>

#include "worker/service/calls.h"
#include "worker/service/problem_session.h"
#include "worker/service/worker_state.h"

namespace kagent::worker {

// The candidate's failure, when the reference ran alone: the verdict's message (first line:
// what the candidate changed; then the reference's error). nullopt when the reference fails
// alone too, or there is nothing to run it on. `state`: null, nothing is put back. Throws
// cuda::ContextLost (the candidate's, as everywhere).
std::optional<std::string> reference_broken_by_candidate(ProblemSession& problem, WorkerState* state,
                                                         const EvaluatorError& failure, int64_t seed,
                                                         const std::string& device);

}  // namespace kagent::worker
