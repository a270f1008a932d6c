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

// Device-wide synchronisation where there is a CUDA device (tests run runners on the CPU).
cudaError_t synchronize_device() {
  static const bool has_device = [] {
    int n = 0;
    const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();
    return ok;
  }();
  return has_device ? cudaDeviceSynchronize() : cudaSuccess;
}

// After a failure: is the CUDA context still usable? A sticky error (its text alone, when the
// context already reported it once) means it is not.
void rethrow_if_context_lost(const std::string& what) {
  cudaError_t e = synchronize_device();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess && cuda::is_sticky(e))
    throw cuda::ContextLost(cuda::Api::Runtime, e, what + " [CUDA context lost: " + cudaGetErrorString(e) + "]");
  if (what.find("illegal memory access") != std::string::npos || what.find("unspecified launch failure") != std::string::npos)
    throw cuda::ContextLost(cuda::Api::Runtime, cudaErrorIllegalAddress, what);
}

}  // namespace

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
  const std::string what = message_of(e);
  return what.find("CUDA out of memory") != std::string::npos || what.find("OutOfMemoryError") != std::string::npos ||
         what.find("cudaErrorMemoryAllocation") != std::string::npos;
}

std::vector<at::Tensor> call_candidate_unsynchronized(Runner& candidate, const Values& inputs) {
  try {
    return candidate.run(inputs);
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

std::vector<at::Tensor> call_candidate(Runner& candidate, const Values& inputs) {
  std::vector<at::Tensor> out = call_candidate_unsynchronized(candidate, inputs);
  const cudaError_t e = synchronize_device();
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    const std::string what = std::string("CUDA error after forward: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
    if (cuda::is_sticky(e)) throw cuda::ContextLost(cuda::Api::Runtime, e, what);
    throw CandidateError(what, e == cudaErrorMemoryAllocation ? reason::kCandidateOom : "");
  }
  return out;
}

std::vector<at::Tensor> call_reference(Runner& reference, const Values& inputs) {
  try {
    std::vector<at::Tensor> out = reference.run(inputs);
    KAGENT_CUDA_CHECK(synchronize_device());
    return out;
  } catch (const cuda::ContextLost&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = message_of(e);
    rethrow_if_context_lost(what);
    throw EvaluatorError("the reference failed: " + what,
                         is_out_of_memory(e) ? reason::kEvaluatorOom : reason::kReferenceFailed);
  }
}

}  // namespace kagent::worker
