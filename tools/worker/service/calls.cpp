#include "worker/service/calls.h"

#include <cuda_runtime_api.h>

#include <c10/util/Exception.h>

#include "cuda/cuda_error.h"
#include "result/eval_result.h"
#include "worker/python/python_runtime.h"

namespace kagent::worker {

namespace {

std::string message_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  if (const auto* py = dynamic_cast<const PythonError*>(&e)) return py->message;
  return e.what();
}

bool has_device() {
  static const bool yes = [] {
    int n = 0;
    const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();
    return ok;
  }();
  return yes;
}

// Device-wide synchronisation where there is a CUDA device (tests run runners on the CPU).
cudaError_t synchronize_device() { return has_device() ? cudaDeviceSynchronize() : cudaSuccess; }

// After a failure: is the CUDA context still usable? A sticky error (its text alone, when the
// context already reported it once) means it is not. cudaSuccess when it is usable.
cudaError_t lost_context_error(const std::string& what) {
  cudaError_t e = synchronize_device();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess && cuda::is_sticky(e)) return e;
  if (what.find("illegal memory access") != std::string::npos) return cudaErrorIllegalAddress;
  if (what.find("unspecified launch failure") != std::string::npos) return cudaErrorLaunchFailure;
  return cudaSuccess;
}

void rethrow_if_context_lost(const std::string& what) {
  const cudaError_t e = lost_context_error(what);
  if (e == cudaSuccess) return;
  throw cuda::ContextLost(cuda::Api::Runtime, e,
                          what.find(cudaGetErrorString(e)) != std::string::npos
                              ? what
                              : what + " [CUDA context lost: " + cudaGetErrorString(e) + "]");
}

}  // namespace

std::optional<std::string> lost_context(const std::string& what) {
  const cudaError_t e = lost_context_error(what);
  if (e == cudaSuccess) return std::nullopt;
  return std::string(cudaGetErrorName(e));
}

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
  const std::string what = message_of(e);
  return what.find("CUDA out of memory") != std::string::npos || what.find("OutOfMemoryError") != std::string::npos ||
         what.find("cudaErrorMemoryAllocation") != std::string::npos;
}

namespace {

// `step` (the candidate's forward, or putting its state back, which runs its modules' Python)
// with its failures turned into the candidate's.
template <class Step>
auto as_candidate(Step&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const cuda::ContextLost&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = message_of(e);
    rethrow_if_context_lost(what);
    std::string traceback;
    if (const auto* py = dynamic_cast<const PythonError*>(&e); py && !py->traceback.empty()) traceback = "\n" + py->traceback;
    throw CandidateError(what + traceback, is_out_of_memory(e) ? reason::kCandidateOom : "");
  }
}

}  // namespace

void restore_candidate_state(Runner& candidate) {
  if (const ModuleState* s = candidate.state()) as_candidate([&] { s->restore(); });
}

void restore_reference_state(Runner& reference) {
  if (const ModuleState* s = reference.state()) s->restore();
}

std::vector<at::Tensor> call_candidate_unsynchronized(Runner& candidate, const Values& inputs) {
  return as_candidate([&] { return candidate.run(inputs); });
}

std::vector<at::Tensor> call_candidate(Runner& candidate, const Values& inputs) {
  restore_candidate_state(candidate);
  std::vector<at::Tensor> out = call_candidate_unsynchronized(candidate, inputs);
  check_after_forward();
  return out;
}

void check_after_forward() {
  cudaError_t e = synchronize_device();
  // A launch that failed and was never checked (a bad configuration) leaves the runtime's last
  // error set: the candidate's, or kagent's next check would fail on it.
  if (e == cudaSuccess && has_device()) e = cudaGetLastError();
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    const std::string what = std::string("CUDA error after forward: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
    if (cuda::is_sticky(e)) throw cuda::ContextLost(cuda::Api::Runtime, e, what);
    throw CandidateError(what, e == cudaErrorMemoryAllocation ? reason::kCandidateOom : "");
  }
}

std::vector<at::Tensor> call_reference(Runner& reference, const Values& inputs) {
  try {
    restore_reference_state(reference);
    std::vector<at::Tensor> out = reference.run(inputs);
    KAGENT_CUDA_CHECK(synchronize_device());
    return out;
  } catch (const cuda::ContextLost&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = message_of(e);
    rethrow_if_context_lost(what);
    if (is_out_of_memory(e)) throw EvaluatorError("the reference failed: " + what, reason::kEvaluatorOom);
    throw EvaluatorError("the reference failed: " + what, reason::kReferenceFailed, std::make_shared<const Values>(inputs));
  }
}

}  // namespace kagent::worker
