// How an evaluation calls the candidate and the reference, and whose failure a failure is.
// Whatever goes wrong inside the candidate's forward is the candidate's (CandidateError: the
// verdict is runtime_error); whatever goes wrong in the reference or in a step of kagent's
// own is the evaluator's (EvaluatorError: internal_error naming the phase, never the
// candidate's fault). A lost CUDA context (cuda::ContextLost) passes through both: it is
// the candidate's, and the worker must be replaced.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/service/runners.h"

namespace kagent::worker {

struct CandidateError : std::runtime_error {
  CandidateError(const std::string& what, std::string reason_) : std::runtime_error(what), reason(std::move(reason_)) {}
  std::string reason;  // "" or reason::kCandidateOom
};

struct EvaluatorError : std::runtime_error {
  EvaluatorError(const std::string& what, std::string reason_, std::shared_ptr<const Values> inputs_ = nullptr)
      : std::runtime_error(what), reason(std::move(reason_)), inputs(std::move(inputs_)) {}
  std::string reason;  // reason::kEvaluatorError, kEvaluatorOom or kReferenceFailed
  // kReferenceFailed: the inputs the reference failed on, for running it alone on them
  // (reference_check.h). The same tensors, not copies: nothing is cloned unless it fails.
  std::shared_ptr<const Values> inputs;
};

// torch's out-of-memory error, or its message from a candidate's own allocator use.
bool is_out_of_memory(const std::exception& e);

// After a failure in a step of kagent's own: whether the CUDA context is lost now (a sticky
// error, or its text in `what`); the error's name when it is. A fault of the candidate's
// kernels may surface only there (an asynchronous error shows at the next synchronisation).
std::optional<std::string> lost_context(const std::string& what);

// A compared call's start on a stateful problem (module_state.h, once held): the candidate's
// plain tensor state put back as it was at construction; nothing otherwise. call_candidate
// does it; the timed calls do not (timing compares nothing). Its failures are the candidate's.
void restore_candidate_state(Runner& candidate);
// The same for the reference (call_reference does it; so do the fp64 truth's runs of its model).
void restore_reference_state(Runner& reference);
// The candidate's forward, then a device-wide synchronisation: faults of its kernels
// (asynchronous ones too) surface here. Starts from the state at construction where the
// problem is stateful.
std::vector<at::Tensor> call_candidate(Runner& candidate, const Values& inputs);
// call_candidate's second half: the device-wide synchronisation after forward, its faults the
// candidate's (a sticky one: cuda::ContextLost; else CandidateError).
void check_after_forward();
// The same without the synchronisation and without putting the state back (the timer's calls;
// the side-stream guard looks at the moment forward returns); only errors raised by forward
// itself are caught here.
std::vector<at::Tensor> call_candidate_unsynchronized(Runner& candidate, const Values& inputs);
// The reference's forward on `inputs` (callers pass a copy where the inputs must stay as
// they are), then a device-wide synchronisation. Starts from the state at construction where
// the problem is stateful.
std::vector<at::Tensor> call_reference(Runner& reference, const Values& inputs);

}  // namespace kagent::worker
