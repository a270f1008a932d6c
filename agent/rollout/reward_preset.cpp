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
  j = {{"name", p.name},
       {"policy", to_string(p.policy)},
       {"baseline", p.compiled_baseline ? "compiled" : "eager"},
       // The compiled baseline reads the timing whatever the field says (the rounds pair eager).
       {"speedup_from", to_string(p.compiled_baseline ? SpeedupEstimate::Timing : p.speedup_from)}};
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

namespace {

// A weight or cap of the config: a number, at least 0.
double non_negative(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (!v.is_number()) throw std::invalid_argument(std::string(key) + " must be a number, not " + v.dump());
  const double d = v.get<double>();
  if (d < 0) throw std::invalid_argument(std::string(key) + " must be at least 0, not " + v.dump());
  return d;
}

}  // namespace

void from_json(const nlohmann::json& j, RewardPreset& p) {
  if (!j.is_object()) throw std::invalid_argument("a reward config is a JSON object, not " + j.dump());
  if (j.contains("name") && !j["name"].is_string()) throw std::invalid_argument("name must be a preset name");
  p = reward_preset(j.value("name", std::string("kevin")));
  if (j.contains("baseline") && !j["baseline"].is_string()) throw std::invalid_argument("baseline must be 'eager' or 'compiled'");
  const std::string base = j.value("baseline", std::string("eager"));
  if (base != "eager" && base != "compiled") throw std::invalid_argument("baseline must be 'eager' or 'compiled'");
  p.compiled_baseline = base == "compiled";
  if (p.compiled_baseline) p.speedup_from = SpeedupEstimate::Timing;
  if (j.contains("speedup_from")) {
    const auto from = j["speedup_from"].is_string() ? speedup_estimate_from_name(j["speedup_from"].get<std::string>())
                                                    : std::nullopt;
    if (!from) throw std::invalid_argument("speedup_from must be 'timing', 'rounds' or 'rounds_low'");
    if (*from != SpeedupEstimate::Timing && p.compiled_baseline)
      throw std::invalid_argument("speedup_from '" + to_string(*from) +
                                  "' reads the rounds, which pair eager with the candidate: not with \"baseline\": \"compiled\"");
    p.speedup_from = *from;
  }
  if (j.contains("policy")) {
    if (!j["policy"].is_string()) throw std::invalid_argument("policy must be 'kernelbench' or 'strict'");
    p.policy = policy_from_string(j["policy"].get<std::string>());
  }
  // A key the preset does not read is a mistake (a typo, another preset's weight), never ignored.
  const std::vector<std::string> keys = p.name == "kevin"      ? std::vector<std::string>{"correct_weight", "speedup_weight", "max_speedup"}
                                        : p.name == "drkernel" ? std::vector<std::string>{"correct", "speedup", "coverage", "max_speedup"}
                                                               : std::vector<std::string>{"compiled", "correct", "bands"};
  for (const auto& [key, value] : j.items()) {
    if (key == "name" || key == "baseline" || key == "policy" || key == "speedup_from" ||
        std::find(keys.begin(), keys.end(), key) != keys.end())
      continue;
    std::string known = "name, baseline, policy, speedup_from";
    for (const auto& k : keys) known += ", " + k;
    throw std::invalid_argument("unknown key '" + key + "' for the " + p.name + " preset (its keys: " + known + ")");
  }
  if (p.name == "kevin") {
    p.correct_weight = non_negative(j, "correct_weight", p.correct_weight);
    p.speedup_weight = non_negative(j, "speedup_weight", p.speedup_weight);
    p.max_speedup = non_negative(j, "max_speedup", p.max_speedup);
  } else if (p.name == "drkernel") {
    p.dk_correct = non_negative(j, "correct", p.dk_correct);
    p.dk_speedup = non_negative(j, "speedup", p.dk_speedup);
    p.dk_coverage = non_negative(j, "coverage", p.dk_coverage);
    p.dk_max_speedup = non_negative(j, "max_speedup", p.dk_max_speedup);
  } else {
    p.tier_compiled = non_negative(j, "compiled", p.tier_compiled);
    p.tier_correct = non_negative(j, "correct", p.tier_correct);
    if (j.contains("bands")) {
      if (!j["bands"].is_array()) throw std::invalid_argument("bands must be an array of {speedup, reward}");
      p.tier_bands.clear();
      for (const auto& b : j.at("bands")) {
        if (!b.is_object() || b.size() != 2 || !b.contains("speedup") || !b.contains("reward"))
          throw std::invalid_argument("a band is {\"speedup\": S, \"reward\": R}, not " + b.dump());
        p.tier_bands.emplace_back(non_negative(b, "speedup", 0), non_negative(b, "reward", 0));
      }
      std::sort(p.tier_bands.begin(), p.tier_bands.end());
    }
  }
}

TurnOutcome outcome_of(const EvalResult& r, bool compiled_baseline, Policy policy, SpeedupEstimate speedup_from) {
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
  if (r.timing) o.speedup = compiled_baseline ? r.timing->speedup_compiled : eager_speedup(*r.timing, speedup_from);
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
