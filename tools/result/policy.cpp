#include "result/policy.h"

#include <stdexcept>

namespace kagent {

namespace {
constexpr std::string_view kReject = kGuardReject;
constexpr std::string_view kFlag = kGuardFlag;
constexpr std::string_view kTolerance = "tolerance";
}  // namespace

std::string to_string(Policy p) { return p == Policy::KernelBench ? "kernelbench" : "strict"; }

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"kernelbench", "strict"};
  return names;
}

Policy policy_from_string(const std::string& name) {
  if (name == "kernelbench") return Policy::KernelBench;
  if (name == "strict") return Policy::Strict;
  throw std::invalid_argument("unknown policy '" + name + "' (kernelbench, strict)");
}

const std::vector<GuardRule>& guard_rules() {
  // Names as in tools/worker/protocol/guard_options.h (the result library does not see it).
  static const std::vector<GuardRule> rules = {
      {"no_kernel", kReject, kReject,
       "KernelBench's CUDA setting asks for custom kernels: a forward that launches none of its own is PyTorch "
       "doing all the work"},
      {"library_share", kReject, kFlag,
       "KernelBench allows partial replacement: cuBLAS/cuDNN or torch ops may do part of the work"},
      {"output_aliases_input", kReject, kReject, "a result aliased to an input or a parameter is no result"},
      {"leftover_memory", kReject, kReject, "an output left in memory by an earlier call is a cached result"},
      {"cached_results", kReject, kReject, "results kept across calls"},
      {"side_stream", kReject, kReject, "work escaping the timed stream"},
      {"inputs_modified", kReject, kReject, "writing the inputs or parameters changes the problem"},
      {"precision_lowered", kReject, kTolerance,
       "KernelBench allows lower precision within the tolerance: rejected when the output is outside the tolerance "
       "of the float64 truth"},
      {"shape_generalization", kReject, kFlag,
       "KernelBench evaluates the problem's own sizes only: sizes baked in are flagged"},
      {"inconsistent_result", kReject, kReject, "wrong on fresh inputs is wrong"},
      {"try_except_fallback", kReject, kReject, "a try/except fallback to PyTorch is a bypass"},
      {"torch_ops_in_forward", kFlag, kFlag, "PyTorch ops beside the custom kernels are noted"},
      {"timing_tampered", kReject, kReject, "timing patched"},
      {"reply_forged", kReject, kReject, "a verdict written by the candidate on the worker's reply pipe"},
      {"torch_patched", kReject, kReject, "torch functions, the reference or precision settings patched"},
      {"cudnn_benchmark", kReject, kFlag,
       "cuDNN's autotuning changes no precision and KernelBench's harness accepts it (put back, noted); strict "
       "rewards the candidate's own kernels and leaves no process-wide switch to the candidate"},
      {"threads", kReject, kReject, "work in threads escapes the timed call"},
      {"excessive_speedup", kFlag, kFlag, "a speedup over 10x eager asks for a human look"},
      {"unjoined_stream", kReject, kReject,
       "forward reads its inputs on a stream that does not wait for the caller's: right only when they were "
       "complete before the call (KernelBench's harness synchronises first, so it never sees the race)"},
      {"host_work", kReject, kReject,
       "under --timing-sample gpu the host's time is not in the sample: work moved onto the host is unseen"},
      {"stateful_module", kFlag, kFlag,
       "forward changes the model's plain tensor state: every compared call started from the state at "
       "construction"},
  };
  return rules;
}

std::string action_under(const GuardFinding& finding, Policy policy) {
  if (policy == Policy::Strict || finding.action != kGuardReject) return finding.action;
  if (!finding.kernelbench_action.empty()) return finding.kernelbench_action;
  for (const auto& rule : guard_rules()) {
    if (rule.guard != finding.name) continue;
    // "tolerance" without the guard's own judgement (an old record): the strict action stands.
    return rule.kernelbench == kTolerance ? finding.action : std::string(rule.kernelbench);
  }
  return finding.action;
}

namespace {
PolicyVerdict derive(Status before_guards, const std::string& reason, const std::string& message,
                     const std::vector<GuardFinding>& findings, Policy policy) {
  // A wrong output carries only the findings about its code (guard_pass.h: code_checks); a
  // rejection among them outranks it, as KernelBench's static checker comes before its harness.
  if (before_guards != Status::Correct && before_guards != Status::Wrong) return {before_guards, reason, message};
  for (const auto& f : findings)
    if (action_under(f, policy) == kGuardReject) {
      std::string text = "rejected by guard " + f.name + ": " + f.message;
      if (before_guards == Status::Wrong) text += " (and its outputs were wrong: " + message + ")";
      return {Status::Rejected, f.name, text};
    }
  return {before_guards, reason, message};
}
}  // namespace

PolicyVerdict verdict_under(const EvalResult& r, Policy policy) {
  if (const auto it = r.verdicts.find(to_string(policy)); it != r.verdicts.end()) return it->second;
  // A record without verdicts: its status is strict's (the only policy there was).
  if (policy == Policy::Strict || r.status != Status::Rejected) {
    if (r.status != Status::Rejected) return derive(r.status, r.reason, r.message, r.guards, policy);
    return {r.status, r.reason, r.message};
  }
  return derive(Status::Correct, "", "correct (rejected under strict: " + r.reason + ")", r.guards, policy);
}

void apply_policies(EvalResult& r, Policy ruling) {
  r.verdicts.clear();
  for (Policy p : {Policy::KernelBench, Policy::Strict})
    r.verdicts[to_string(p)] = derive(r.status, r.reason, r.message, r.guards, p);
  r.policy = to_string(ruling);
  const PolicyVerdict& v = r.verdicts.at(r.policy);
  r.status = v.status;
  r.reason = v.reason;
  r.message = v.message;
}

bool overrule(EvalResult& r, const PolicyVerdict& v, Status status, std::optional<Status> also) {
  const auto takes = [&](Status s) { return s == status || (also && s == *also); };
  for (auto& entry : r.verdicts)
    if (takes(entry.second.status)) entry.second = v;
  if (!takes(r.status)) return false;
  r.status = v.status;
  r.reason = v.reason;
  r.message = v.message;
  return true;
}

bool rejected_under_all(const std::vector<GuardFinding>& findings) {
  for (Policy p : {Policy::KernelBench, Policy::Strict}) {
    bool rejected = false;
    for (const auto& f : findings) rejected = rejected || action_under(f, p) == kGuardReject;
    if (!rejected) return false;
  }
  return true;
}

}  // namespace kagent
