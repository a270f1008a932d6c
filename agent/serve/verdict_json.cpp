#include "serve/verdict_json.h"

#include "common/json_optional.h"
#include "rollout/reward_preset.h"

namespace kagent::serve {

using nlohmann::json;

namespace {

std::optional<double> median_us(const std::optional<Timing>& t, std::optional<TimingStats> Timing::*which) {
  if (!t || !((*t).*which)) return std::nullopt;
  return ((*t).*which)->median_ms * 1000.0;
}

json guards_json(const EvalResult& r, Policy policy) {
  json g = json::array();
  for (const auto& f : r.guards)
    g.push_back({{"name", f.name}, {"action", action_under(f, policy)}, {"strict_action", f.action},
                 {"kernelbench_action", action_under(f, Policy::KernelBench)}, {"message", f.message}});
  return g;
}

json verdicts_json(const EvalResult& r) {
  json v = json::object();
  for (const auto& name : policy_names()) v[name] = verdict_under(r, policy_from_string(name));
  return v;
}

// Seconds per phase, in the order they ran; a phase that ran twice (none does today) adds up.
json phase_seconds_json(const EvalResult& r) {
  json j = json::object();
  for (const auto& p : r.phases) j[p.name] = j.value(p.name, 0.0) + p.seconds;
  return j;
}

}  // namespace

json reward_json(std::optional<double> reward) { return reward ? json(*reward) : json(nullptr); }

json step_metadata(const EvalResult* r, const prompt::FormatError* fe, int turn, Policy policy) {
  if (!r)
    return {{"status", "format_error"}, {"reason", fe ? fe->kind : ""}, {"message", fe ? fe->message : ""},
            {"compiled", false}, {"correct", false}, {"speedup_eager", nullptr}, {"speedup_compiled", nullptr},
            {"speedup_rounds", nullptr}, {"runtime_us", nullptr}, {"ref_runtime_us", nullptr}, {"time_coverage", nullptr},
            {"guards", json::array()},
            {"policy", to_string(policy)}, {"verdicts", nullptr}, {"own_kernel_share", nullptr},
            {"sandbox", sandbox_not_run("the answer held no code to run")}, {"turn", turn}};
  const auto o = rollout::outcome_of(*r, false, policy);
  const PolicyVerdict v = verdict_under(*r, policy);
  const bool not_run = r->reason == reason::kNoGpu;
  return {{"status", not_run ? (o.compiled ? "compiled_not_run" : "not_run") : to_string(v.status)},
          {"reason", not_run ? "compile_only" : v.reason},
          {"message", not_run ? std::string(o.compiled ? "compiled and checked; not run: the server is --compile-only (no GPU)"
                                                       : "not run: the server is --compile-only (no GPU)")
                              : v.message},
          {"compiled", o.compiled},
          {"correct", not_run ? json(nullptr) : json(o.correct)},
          {"speedup_eager", json_or_null(r->timing ? r->timing->speedup_eager : std::nullopt)},
          {"speedup_compiled", json_or_null(r->timing ? r->timing->speedup_compiled : std::nullopt)},
          // The speedup's interval where paired rounds ran (--speedup-rounds; result/speedup_rounds.h).
          {"speedup_rounds", r->timing && r->timing->rounds ? json(*r->timing->rounds) : json(nullptr)},
          {"runtime_us", json_or_null(median_us(r->timing, &Timing::candidate))},
          {"ref_runtime_us", json_or_null(median_us(r->timing, &Timing::eager))},
          {"time_coverage", json_or_null(o.time_coverage)},
          {"guards", guards_json(*r, policy)},
          {"policy", to_string(policy)},
          {"verdicts", not_run ? json(nullptr) : verdicts_json(*r)},
          {"own_kernel_share", json_or_null(r->own_kernel_share)},
          // What held the candidate's code in the worker that ran it (sandbox/sandbox_section.h).
          {"sandbox", sandbox_json(*r)},
          {"turn", turn}};
}

json evaluation_json(const EvalResult* r, const prompt::FormatError* fe, std::optional<double> reward, Policy policy) {
  json m = step_metadata(r, fe, 0, policy);
  m.erase("turn");
  const bool flagged = r && rollout::outcome_of(*r, false, policy).flagged;
  return {{"status", m["status"]},
          {"reason", m["reason"]},
          {"message", m["message"]},
          {"compiled", m["compiled"]},
          {"correctness", m["correct"]},
          {"speedup", m["speedup_eager"]},
          {"speedup_compiled", m["speedup_compiled"]},
          {"speedup_rounds", m["speedup_rounds"]},
          {"kernel_runtime", m["runtime_us"]},
          {"reference_runtime", m["ref_runtime_us"]},
          {"runtime_unit", "us"},
          {"time_coverage", m["time_coverage"]},
          {"decoy_kernel", flagged},
          {"guards", m["guards"]},
          {"policy", m["policy"]},
          {"sandbox", m["sandbox"]},
          {"verdicts", m["verdicts"]},
          {"own_kernel_share", m["own_kernel_share"]},
          {"reward", reward_json(reward)},
          {"compile_seconds", r && r->compile ? json(r->compile->seconds) : json(nullptr)},
          {"eval_seconds", r ? json(r->eval_seconds) : json(nullptr)},
          // The node's whole time on it, from taking it (its problem's opening, the build, the
          // wait for a worker, the evaluation): beside the client's own, what the queue took.
          {"job_seconds", r ? json(r->total_seconds) : json(nullptr)},
          // Where eval_seconds went, phase by phase, and the part of it spent waiting for the
          // GPU's timing lock: what a trainer (and bench/serve/cluster_nodes.py) can sum.
          {"phase_seconds", r ? phase_seconds_json(*r) : json(nullptr)},
          {"lock_wait_seconds", r ? json(r->isolation.timing_lock_wait_seconds) : json(nullptr)}};
}

}  // namespace kagent::serve
