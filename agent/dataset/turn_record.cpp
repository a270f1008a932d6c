#include "dataset/turn_record.h"

#include "result/policy.h"

namespace kagent::dataset {

using nlohmann::json;

std::string turn_status(const traj::Turn& turn) {
  if (turn.error) return "error:" + turn.error->kind;
  return turn.eval ? to_string(turn.eval->status) : "none";
}

json status_policy(const traj::Turn& turn) {
  if (turn.error || !turn.eval) return nullptr;
  return turn.eval->policy.empty() ? to_string(Policy::Strict) : turn.eval->policy;
}

json turn_verdicts(const traj::Turn& turn) {
  json out = json::object();
  if (turn.error || !turn.eval) {
    const json none = {{"status", turn_status(turn)}, {"reason", turn.error ? turn.error->message : ""}};
    for (const auto& name : policy_names()) out[name] = none;
    return out;
  }
  for (const auto& name : policy_names()) {
    const PolicyVerdict v = verdict_under(*turn.eval, policy_from_string(name));
    out[name] = {{"status", to_string(v.status)}, {"reason", v.reason}};
  }
  return out;
}

json turn_record(const SourceTrajectory& src, const traj::Turn& turn) {
  return {{"problem", src.trajectory.problem.name},
          {"format", src.format},
          {"status", turn_status(turn)},
          {"status_policy", status_policy(turn)},
          {"verdicts", turn_verdicts(turn)}};
}

}  // namespace kagent::dataset
