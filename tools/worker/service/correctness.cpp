#include "worker/service/correctness.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checker/compare.h"
#include "worker/service/calls.h"

namespace kagent::worker {

namespace {

// After the reference's first call: a forward that changed the model's plain tensor state makes
// every output depend on the calls before it, while kagent calls the candidate twice per trial
// and the reference once. From here on both sides start each compared call from the state at
// construction (KernelBench's harness calls them in lockstep, which keeps them equal too).
void hold_state_if_changed(Runner& reference, Runner& candidate, const EvalOptions& opts, EvalResult& result) {
  ModuleState* state = reference.state();
  if (!state) return;
  const std::vector<std::string> changed = state->changed();
  if (changed.empty()) return;
  state->hold();
  if (ModuleState* own = candidate.state()) own->hold();
  if (opts.guards.on(guard::kStatefulModule))
    result.guards.push_back({guard::kStatefulModule, kGuardFlag,
                             fmt::format("forward changes {} between calls: every compared call starts from the state "
                                         "at construction",
                                         fmt::join(changed, ", "))});
}

}  // namespace

bool check_correctness(ProblemSession& problem, Runner& candidate, Runner& reference, int64_t params_bytes,
                       const EvalOptions& opts, EvalResult& result, const std::string& device,
                       const std::function<void()>& between) {
  Correctness c;
  c.trials = opts.trials;
  // Compares one run's outputs; records the first failure. Returns whether they all matched.
  auto judge = [&](const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected, int trial,
                   const char* run) {
    std::optional<OutputCheck> failure = output_count_mismatch(got.size(), expected.size());
    for (size_t i = 0; !failure && i < expected.size(); ++i) {
      OutputCheck oc = compare_output(got[i], expected[i], static_cast<int>(i), opts.tolerance);
      c.max_abs_error = std::max(c.max_abs_error, oc.max_abs_error);
      c.max_rel_error = std::max(c.max_rel_error, oc.max_rel_error);
      if (!oc.ok) failure = std::move(oc);
    }
    if (!failure) return true;
    c.first_failure = std::move(failure);
    c.first_failure_trial = trial;
    c.first_failure_run = run;
    return false;
  };
  bool reference_writes_inputs = true;  // until the first trial shows it does not
  // KernelBench's trials: its seeds, its inputs (drawn on the CPU, then moved), so that an
  // answer is judged on the very numbers KernelBench's harness judges it on.
  const std::vector<int64_t> seeds = problem.trial_seeds(opts.seed, opts.trials);
  for (int t = 0; t < opts.trials; ++t) {
    if (t > 0 && between) between();  // nothing of the last trial is left on the GPU to keep
    const Values inputs = problem.kernelbench_inputs(device, seeds[static_cast<size_t>(t)]);
    // Each output set lives only as long as its comparison needs it: on problems whose tensors
    // take gigabytes, the trial's peak is the inputs, one copy of them and two output sets.
    std::vector<at::Tensor> before = call_candidate(candidate, clone_values(inputs));
    std::vector<at::Tensor> expected;
    if (reference_writes_inputs) {
      // The first trial gives the reference a copy and looks whether it wrote it (an in-place
      // op on an input); a reference that does not gets the inputs themselves after that.
      Values copy = clone_values(inputs);
      expected = call_reference(reference, copy);
      reference_writes_inputs = false;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].isTensor() && !inputs[i].toTensor().equal(copy[i].toTensor())) reference_writes_inputs = true;
    } else {
      expected = call_reference(reference, inputs);
    }
    if (t == 0) hold_state_if_changed(reference, candidate, opts, result);
    if (t == 0) result.footprint_bytes = tensor_bytes(inputs) + params_bytes + tensor_bytes(expected);
    const bool before_ok = judge(before, expected, t, "before reference");
    before.clear();
    if (!before_ok) break;
    const std::vector<at::Tensor> after = call_candidate(candidate, clone_values(inputs));
    if (!judge(after, expected, t, "after reference")) break;
    ++c.trials_passed;
  }
  const bool ok = !c.first_failure;
  if (!ok) {
    result.status = Status::Wrong;
    result.reason = c.first_failure->reason;
    result.message = fmt::format("trial {} ({}), output {}: {}", c.first_failure_trial + 1, c.first_failure_run,
                                 c.first_failure->output, c.first_failure->message);
  }
  result.correctness = std::move(c);
  return ok;
}

}  // namespace kagent::worker
