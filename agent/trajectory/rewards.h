// Rewards, after Kevin (multi-turn RL for CUDA kernels): a per-turn score
//   score(t) = correct_weight * correct + speedup_weight * speedup * correct
// (defaults 0.3 and 1.0; speedup over PyTorch eager) and discounted returns
//   R_t = sum_k gamma^k score(t+k)      (gamma 0.4 by default).
// A failed turn (format error, LLM error, no eval, not correct) scores 0.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "trajectory/trajectory.h"

namespace kagent::traj {

enum class SpeedupBaseline { Eager, Compiled };

struct RewardConfig {
  double correct_weight = 0.3;
  double speedup_weight = 1.0;
  double gamma = 0.4;
  SpeedupBaseline baseline = SpeedupBaseline::Eager;
  // A correct turn without a timing (should not happen) counts this speedup.
  double missing_speedup = 0.0;
  // Cap on the speedup term, against timing noise on tiny kernels; nullopt: no cap.
  std::optional<double> max_speedup;
};

void to_json(nlohmann::json& j, const RewardConfig& c);
void from_json(const nlohmann::json& j, RewardConfig& c);

// The speedup a turn earns under the config's baseline (nullopt when not timed).
std::optional<double> turn_speedup(const Turn& turn, const RewardConfig& cfg = {});
// Kevin's score of one turn.
double turn_score(const Turn& turn, const RewardConfig& cfg = {});
// Same formula on plain numbers.
double score(bool correct, double speedup, const RewardConfig& cfg = {});

// R_t = sum_{k>=0} gamma^k scores[t+k], for every t.
std::vector<double> discounted_returns(const std::vector<double>& scores, double gamma);

std::vector<double> turn_scores(const std::vector<Turn>& turns, const RewardConfig& cfg = {});
// Highest score among correct turns; ties go to the earliest. nullopt when none is correct.
std::optional<int> best_turn(const std::vector<Turn>& turns, const RewardConfig& cfg = {});

// Fills every turn's reward and return_, and the trajectory's best_turn.
void assign_rewards(Trajectory& t, const RewardConfig& cfg = {});

}  // namespace kagent::traj
