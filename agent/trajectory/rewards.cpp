#include "trajectory/rewards.h"

#include "common/json_optional.h"

#include <algorithm>
#include <stdexcept>

namespace kagent::traj {

void to_json(nlohmann::json& j, const RewardConfig& c) {
  j = {{"correct_weight", c.correct_weight},
       {"speedup_weight", c.speedup_weight},
       {"gamma", c.gamma},
       {"baseline", c.baseline == SpeedupBaseline::Eager ? "eager" : "compiled"},
       {"missing_speedup", c.missing_speedup},
       {"max_speedup", json_or_null(c.max_speedup)}};
}

void from_json(const nlohmann::json& j, RewardConfig& c) {
  RewardConfig d;
  c.correct_weight = j.value("correct_weight", d.correct_weight);
  c.speedup_weight = j.value("speedup_weight", d.speedup_weight);
  c.gamma = j.value("gamma", d.gamma);
  std::string b = j.value("baseline", std::string("eager"));
  if (b == "eager") c.baseline = SpeedupBaseline::Eager;
  else if (b == "compiled") c.baseline = SpeedupBaseline::Compiled;
  else throw std::invalid_argument("reward baseline must be 'eager' or 'compiled', not '" + b + "'");
  c.missing_speedup = j.value("missing_speedup", d.missing_speedup);
  if (j.contains("max_speedup") && !j["max_speedup"].is_null()) c.max_speedup = j["max_speedup"].get<double>();
  else c.max_speedup.reset();
}

std::optional<double> turn_speedup(const Turn& turn, const RewardConfig& cfg) {
  return cfg.baseline == SpeedupBaseline::Eager ? turn.speedup_eager() : turn.speedup_compiled();
}

double score(bool correct, double speedup, const RewardConfig& cfg) {
  if (!correct) return 0.0;
  if (cfg.max_speedup) speedup = std::min(speedup, *cfg.max_speedup);
  return cfg.correct_weight + cfg.speedup_weight * speedup;
}

double turn_score(const Turn& turn, const RewardConfig& cfg) {
  if (!turn.correct()) return 0.0;
  return score(true, turn_speedup(turn, cfg).value_or(cfg.missing_speedup), cfg);
}

std::vector<double> discounted_returns(const std::vector<double>& scores, double gamma) {
  std::vector<double> r(scores.size());
  double acc = 0;
  for (size_t i = scores.size(); i-- > 0;) {
    acc = scores[i] + gamma * acc;
    r[i] = acc;
  }
  return r;
}

std::vector<double> turn_scores(const std::vector<Turn>& turns, const RewardConfig& cfg) {
  std::vector<double> s;
  s.reserve(turns.size());
  for (const auto& t : turns) s.push_back(turn_score(t, cfg));
  return s;
}

std::optional<int> best_turn(const std::vector<Turn>& turns, const RewardConfig& cfg) {
  std::optional<int> best;
  double best_score = 0;
  for (size_t i = 0; i < turns.size(); ++i) {
    if (!turns[i].correct()) continue;
    double s = turn_score(turns[i], cfg);
    if (!best || s > best_score) {  // strict: ties keep the earliest
      best = static_cast<int>(i);
      best_score = s;
    }
  }
  return best;
}

void assign_rewards(Trajectory& t, const RewardConfig& cfg) {
  auto s = turn_scores(t.turns, cfg);
  auto r = discounted_returns(s, cfg.gamma);
  for (size_t i = 0; i < t.turns.size(); ++i) {
    t.turns[i].reward = s[i];
    t.turns[i].return_ = r[i];
  }
  t.best_turn = best_turn(t.turns, cfg);
}

}  // namespace kagent::traj
