#include "rollout/reward_preset.h"

#include <algorithm>
#include <stdexcept>

namespace kagent::rollout {

std::vector<std::string> reward_preset_names() { return {"kevin", "drkernel", "tiered"}; }

RewardPreset reward_preset(const std::string& name) {
  const auto names = reward_preset_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw std::invalid_argument("unknown reward preset '" + name + "' (kevin, drkernel, tiered)");
  RewardPreset p;
  p.name = name;
  return p;
}

void to_json(nlohmann::json& j, const RewardPreset& p) {
  j = {{"name", p.name}, {"policy", to_string(p.policy)}, {"baseline", p.compiled_baseline ? "compiled" : "eager"}};
  if (p.name == "kevin") {
    j["correct_weight"] = p.correct_weight;
    j["speedup_weight"] = p.speedup_weight;
    j["max_speedup"] = p.max_speedup;
  } else if (p.name == "drkernel") {
    j["correct"] = p.dk_correct;
    j["speedup"] = p.dk_speedup;
    j["coverage"] = p.dk_coverage;
    j["max_speedup"] = p.dk_max_speedup;
  } else {
    j["compiled"] = p.tier_compiled;
    j["correct"] = p.tier_correct;
    j["bands"] = nlohmann::json::array();
    for (auto [floor, step] : p.tier_bands) j["bands"].push_back({{"speedup", floor}, {"reward", step}});
  }
}

void from_json(const nlohmann::json& j, RewardPreset& p) {
  if (!j.is_object()) throw std::invalid_argument("a reward config is a JSON object");
  p = reward_preset(j.value("name", std::string("kevin")));
  const std::string base = j.value("baseline", std::string("eager"));
  if (base != "eager" && base != "compiled") throw std::invalid_argument("reward baseline must be 'eager' or 'compiled'");
  p.compiled_baseline = base == "compiled";
  if (j.contains("policy")) {
    if (!j["policy"].is_string()) throw std::invalid_argument("reward policy must be 'kernelbench' or 'strict'");
    p.policy = policy_from_string(j["policy"].get<std::string>());
  }
  if (p.name == "kevin") {
    p.correct_weight = j.value("correct_weight", p.correct_weight);
    p.speedup_weight = j.value("speedup_weight", p.speedup_weight);
    p.max_speedup = j.value("max_speedup", p.max_speedup);
  } else if (p.name == "drkernel") {
    p.dk_correct = j.value("correct", p.dk_correct);
    p.dk_speedup = j.value("speedup", p.dk_speedup);
    p.dk_coverage = j.value("coverage", p.dk_coverage);
    p.dk_max_speedup = j.value("max_speedup", p.dk_max_speedup);
  } else {
    p.tier_compiled = j.value("compiled", p.tier_compiled);
    p.tier_correct = j.value("correct", p.tier_correct);
    if (j.contains("bands")) {
      p.tier_bands.clear();
      for (const auto& b : j.at("bands")) p.tier_bands.emplace_back(b.at("speedup").get<double>(), b.at("reward").get<double>());
      std::sort(p.tier_bands.begin(), p.tier_bands.end());
    }
  }
}

TurnOutcome outcome_of(const EvalResult& r, bool compiled_baseline, Policy policy) {
  TurnOutcome o;
  o.compiled = r.compile && r.compile->ok;
  const PolicyVerdict v = verdict_under(r, policy);
  o.correct = v.status == Status::Correct;
  o.rejected = v.status == Status::Rejected;
  for (const auto& g : r.guards) {
    const std::string action = action_under(g, policy);
    if (action == kGuardReject) o.rejected = true;
    if (action == kGuardFlag) o.flagged = true;
  }
  if (r.timing) o.speedup = compiled_baseline ? r.timing->speedup_compiled : r.timing->speedup_eager;
  if (r.profile.is_object() && r.profile.contains("own_share") && r.profile["own_share"].is_number())
    o.time_coverage = r.profile["own_share"].get<double>();
  return o;
}

double reward(const TurnOutcome& o, const RewardPreset& p) {
  if (o.rejected) return 0.0;
  const double speedup = o.speedup.value_or(0.0);
  if (p.name == "kevin") {
    if (!o.correct) return 0.0;
    return p.correct_weight + p.speedup_weight * std::min(speedup, p.max_speedup);
  }
  if (p.name == "drkernel") {
    if (!o.correct || o.flagged) return 0.0;
    return p.dk_correct + p.dk_speedup * std::min(speedup, p.dk_max_speedup) + p.dk_coverage * o.time_coverage.value_or(0.0);
  }
  // tiered
  if (!o.compiled && !o.correct) return 0.0;
  if (!o.correct) return p.tier_compiled;
  double r = p.tier_correct;
  for (auto [floor, step] : p.tier_bands)
    if (speedup >= floor) r = step;
  return r;
}

}  // namespace kagent::rollout
