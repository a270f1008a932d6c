#include "rollout/returns.h"

#include <algorithm>
#include <cmath>

#include "trajectory/rewards.h"

namespace kagent::rollout {

std::vector<double> turn_rewards(const traj::Trajectory& t, const RewardPreset& preset) {
  std::vector<double> r;
  r.reserve(t.turns.size());
  for (const auto& turn : t.turns) r.push_back(turn.eval && !turn.error ? reward(*turn.eval, preset) : 0.0);
  return r;
}

std::vector<double> discounted_returns(const std::vector<double>& rewards, double gamma) {
  return traj::discounted_returns(rewards, gamma);
}

std::vector<double> normalise_by_group(const std::vector<double>& values, const std::vector<std::string>& keys) {
  struct Sum { double n = 0, s = 0, s2 = 0; };
  std::map<std::string, Sum> groups;
  for (size_t i = 0; i < values.size(); ++i) {
    auto& g = groups[keys[i]];
    g.n += 1; g.s += values[i]; g.s2 += values[i] * values[i];
  }
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& g = groups[keys[i]];
    const double mean = g.s / g.n;
    const double var = std::max(0.0, g.s2 / g.n - mean * mean);
    const double sd = std::sqrt(var);
    out[i] = (values[i] - mean) / (sd > 1e-12 ? sd : 1.0);
  }
  return out;
}

}  // namespace kagent::rollout
