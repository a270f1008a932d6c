#include "result/exit_status.h"

namespace kagent::exit_status {

int for_result(const EvalResult& r) {
  // The finer reason wins: it is what a script wants to branch on.
  if (r.reason == reason::kMissingForward) return kMissingForward;
  if (r.reason == reason::kSignatureMismatch) return kSignatureMismatch;
  if (r.reason == reason::kOutputCount) return kOutputCount;
  if (r.reason == reason::kFileNotFound) return kFileNotFound;
  if (r.reason == reason::kProblemIncomplete) return kProblemIncomplete;
  if (r.reason == reason::kNoGpu) return kNoGpu;
  if (r.reason == reason::kSandboxUnmet) return kSandboxUnmet;
  switch (r.status) {
    case Status::Correct: return kCorrect;
    case Status::Wrong: return kWrong;
    case Status::CompileError: return kCompileError;
    case Status::RuntimeError: return kRuntimeError;
    case Status::Timeout: return kTimeout;
    case Status::Crash: return kCrash;
    case Status::Invalid: return kInvalidCandidate;
    case Status::ProblemError: return kProblemLoad;
    case Status::InternalError: return kInternal;
    case Status::Rejected: return kRejected;
  }
  return kInternal;
}

}  // namespace kagent::exit_status
