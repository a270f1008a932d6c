// What `kagent rollout` writes from finished trajectories (field by field: agent/rollout/README.md):
//   samples: one row per turn, the messages it was sent, the model's answer, its reward (under
//     the preset's policy, reward_policy) and discounted return (and the return normalised within
//     its task when asked), the turn's record (dataset/turn_record.h: problem, format, status and
//     both policies' verdicts), with token ids and logprobs carried where the model server
//     returned them;
//   prompts: one RL prompt row per (problem, answer format) in the shape verl and SkyRL read
//     (data_source, prompt, ability, env_class, reward_model, reward_spec, extra_info) with the
//     problem and format at the top level, in reward_spec, in extra_info and in
//     extra_info.interaction_kwargs; ground_truth is the task id that `kagent serve` resolves.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "dataset/run_source.h"
#include "rollout/reward_preset.h"

namespace kagent::rollout {

struct RolloutOptions {
  RewardPreset preset;
  double gamma = 0.4;
  bool group_normalise = false;     // adds "advantage": the return normalised per task
};

std::vector<nlohmann::json> sample_rows(const std::vector<dataset::SourceTrajectory>& runs, const RolloutOptions& opts);
std::vector<nlohmann::json> prompt_rows(const std::vector<dataset::SourceTrajectory>& runs, const RolloutOptions& opts);

}  // namespace kagent::rollout
