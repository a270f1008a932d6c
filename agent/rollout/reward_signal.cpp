#include "rollout/reward_signal.h"

#include <algorithm>

#include <fmt/format.h>

namespace kagent::rollout {

namespace {

// Whether the preset's reward grows with the speedup at all.
bool has_speed_term(const RewardPreset& p) {
  if (p.name == "kevin") return p.speedup_weight > 0;
  if (p.name == "drkernel") return p.dk_speedup > 0;
  return std::any_of(p.tier_bands.begin(), p.tier_bands.end(), [&](const auto& b) { return b.second != p.tier_correct; });
}

// Whether a turn the reward calls correct scores above 0 (the rejected and drkernel's flagged
// score 0 whatever their speed).
bool scored_correct(const TurnOutcome& o, const RewardPreset& p) {
  return o.correct && !o.rejected && !(p.name == "drkernel" && o.flagged);
}

}  // namespace

RewardSignal check_reward_signal(const std::vector<dataset::SourceTrajectory>& runs, const RewardPreset& preset,
                                 const std::vector<double>& rewards) {
  RewardSignal s;
  int correct = 0, timed = 0, profiled = 0;
  std::optional<double> untimed_reward;
  for (const auto& src : runs)
    for (const auto& turn : src.trajectory.turns) {
      if (!turn.eval || turn.error) continue;
      const TurnOutcome o = outcome_of(*turn.eval, preset.compiled_baseline, preset.policy, preset.speedup_from);
      if (!scored_correct(o, preset)) continue;
      ++correct;
      timed += o.speedup.has_value();
      profiled += o.time_coverage.has_value();
      if (!o.speedup && !untimed_reward) untimed_reward = reward(o, preset);
    }
  const std::string baseline = preset.compiled_baseline ? "torch.compile (\"baseline\": \"compiled\")" : "eager";
  if (correct > 0 && has_speed_term(preset)) {
    if (timed == 0)
      s.refusal = fmt::format("none of the {} correct turns has a speedup over {}: the {} reward would give each the same {:g}, "
                              "with no speed signal",
                              correct, baseline, preset.name, untimed_reward.value_or(0.0));
    else if (timed < correct)
      s.warnings.push_back(fmt::format("{} of {} correct turns have no speedup over {}: they get the {} reward of a speedup of 0",
                                       correct - timed, correct, baseline, preset.name));
  }
  if (preset.name == "drkernel" && preset.dk_coverage > 0 && correct > 0 && profiled == 0)
    s.warnings.push_back(fmt::format("none of the {} correct turns was profiled: drkernel's coverage term is 0 for each", correct));
  if (rewards.size() > 1 && std::all_of(rewards.begin(), rewards.end(), [&](double r) { return r == rewards.front(); }))
    s.warnings.push_back(fmt::format("every one of the {} turns gets the reward {:g} ({} correct under the {} policy): the rewards "
                                     "carry no signal",
                                     rewards.size(), rewards.front(), correct, to_string(preset.policy)));
  return s;
}

}  // namespace kagent::rollout
