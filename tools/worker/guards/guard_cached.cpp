#include "worker/guards/guard_cached.h"

#include <fmt/format.h>

#include "worker/service/calls.h"
#include "checker/compare.h"
#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::optional<GuardFinding> check_fresh_values(ProblemSession& problem, Runner& candidate, Runner& reference,
                                               Values& timing_inputs, int64_t seed, const ToleranceConfig& tolerance) {
  const Values fresh = problem.make_inputs("cuda", seed);
  int rewritten = 0;
  for (size_t i = 0; i < timing_inputs.size() && i < fresh.size(); ++i) {
    if (!timing_inputs[i].isTensor() || !fresh[i].isTensor()) continue;
    at::Tensor target = timing_inputs[i].toTensor();
    const at::Tensor& source = fresh[i].toTensor();
    if (target.sizes() != source.sizes() || target.scalar_type() != source.scalar_type()) continue;
    if (!target.is_non_overlapping_and_dense()) continue;  // an expanded input cannot take new values in place
    target.copy_(source);  // in place: the pointer a cache would key on stays the same
    ++rewritten;
  }
  if (rewritten == 0) return std::nullopt;
  const std::vector<at::Tensor> expected = call_reference(reference, clone_values(timing_inputs));
  const std::vector<at::Tensor> got = call_candidate(candidate, timing_inputs);
  if (const auto bad = first_mismatch(got, expected, tolerance))
    return GuardFinding{guard::kCachedResults, kGuardReject,
                        fmt::format("after timing, the timed input tensors got fresh values in place and forward "
                                    "returned stale results: output {}: {}",
                                    bad->output, bad->message)};
  return std::nullopt;
}

}  // namespace kagent::worker
