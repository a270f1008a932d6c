// Per-turn rewards of a trajectory under a preset, their discounted returns
//   R_t = sum_{k>=0} gamma^k r(t+k)
// and the optional normalisation per task (GRPO-like): every return of a task's samples minus
// their mean, over their standard deviation (population; 1 when it is 0).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rollout/reward_preset.h"
#include "trajectory/trajectory.h"

namespace kagent::rollout {

// r(t) for every turn: 0 where a turn has no verdict (format error, LLM error).
std::vector<double> turn_rewards(const traj::Trajectory& t, const RewardPreset& preset);
// R_t for every t.
std::vector<double> discounted_returns(const std::vector<double>& rewards, double gamma);

// `values` grouped by key; returns them normalised within their group, same order.
std::vector<double> normalise_by_group(const std::vector<double>& values, const std::vector<std::string>& keys);

}  // namespace kagent::rollout
