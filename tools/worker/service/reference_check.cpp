#include "worker/service/reference_check.h"

#include <fmt/format.h>

#include "cuda/cuda_error.h"
#include "result/eval_result.h"

namespace kagent::worker {

std::optional<std::string> reference_broken_by_candidate(ProblemSession& problem, WorkerState* state,
                                                         const EvaluatorError& failure, int64_t seed,
                                                         const std::string& device) {
  if (failure.reason != reason::kReferenceFailed || !failure.inputs) return std::nullopt;
  std::vector<LeftBehind> changed;
  try {
    if (state) changed = state->put_back_python_now();
    // A fresh model: the candidate may have reached the evaluation's own one. The inputs are
    // copied, as the reference may write them.
    PythonRunner alone(problem.make_model(device, seed));
    (void)call_reference(alone, clone_values(*failure.inputs));
  } catch (const cuda::ContextLost&) {
    throw;
  } catch (const std::exception&) {  // it fails alone too (or cannot be built): not shown the candidate's
    return std::nullopt;
  }
  std::string what;
  for (const auto& c : changed) what += fmt::format("{}{} ({})", what.empty() ? "" : "; ", c.item, c.detail);
  if (what.empty()) what = "something kagent does not watch (no change of torch's process-wide state was found)";
  return fmt::format("the reference failed beside the candidate and ran alone: the candidate changed {}\n"
                     "(alone: a fresh reference model on the same inputs, torch's state as before the candidate "
                     "loaded)\n{}",
                     what, failure.what());
}

}  // namespace kagent::worker
