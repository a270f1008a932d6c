// Policies: which reward-hack guards turn a correct candidate into a rejected one.
//   kernelbench  KernelBench's own rules (its harness and static checker, "partial replacement"):
//                library kernels and torch ops may do part of the work; bypasses are rejected.
//   strict       the work must be the candidate's own kernels ("all compute in custom
//                kernels"): for RL rewards that must come from the model's kernels.
// Every result carries the verdict under both (EvalResult::verdicts); the ruling policy's
// verdict is the result's status, reason and message. The table of rules is guard_rules():
// docs/evaluation.md shows it.
#pragma once

#include <optional>

#include <string>
#include <string_view>
#include <vector>

#include "result/eval_result.h"

namespace kagent {

enum class Policy { KernelBench, Strict };

std::string to_string(Policy p);
// Throws std::invalid_argument naming the policies for an unknown name.
Policy policy_from_string(const std::string& name);
const std::vector<std::string>& policy_names();  // {"kernelbench", "strict"}

// What one guard's finding does under each policy. `strict` is the action the guard reports
// (GuardFinding::action); `kernelbench` is what that becomes under KernelBench's rules.
struct GuardRule {
  std::string_view guard;
  std::string_view strict;       // "reject" | "flag"
  std::string_view kernelbench;  // "reject" | "flag" | "tolerance": reject only beyond the tolerance
  std::string_view why;          // one line for the docs and the report
};
const std::vector<GuardRule>& guard_rules();

// The action of `finding` under `policy`: strict is the guard's own; kernelbench is the
// guard's own kernelbench_action where it set one, else the table's (a guard the table does
// not know keeps its action).
std::string action_under(const GuardFinding& finding, Policy policy);

// The verdict under `policy`: the one recorded, else derived from the status before the
// guards and the findings (records written before policies existed).
PolicyVerdict verdict_under(const EvalResult& r, Policy policy);

// Fills r.verdicts for every policy from r's status (the verdict before the guards ruled) and
// its findings, then sets r.policy and r's status, reason and message to `ruling`'s verdict.
// Called once, where the evaluation ends; r.status is Correct there unless the candidate failed.
void apply_policies(EvalResult& r, Policy ruling);

// After apply_policies, a ruling that outranks the guards (what the candidate left in the
// worker, a forged reply): every verdict, each policy's and r's own, whose status is `status` or
// `also` becomes `v`. Returns whether r's own did.
bool overrule(EvalResult& r, const PolicyVerdict& v, Status status, std::optional<Status> also = std::nullopt);

// Whether the guards' findings so far reject the candidate under every policy (the evaluation
// can stop: no policy will call it correct).
bool rejected_under_all(const std::vector<GuardFinding>& findings);

}  // namespace kagent
