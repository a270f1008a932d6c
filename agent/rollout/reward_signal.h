// Whether a reward can tell turns apart on the data at hand, checked before `kagent rollout`
// writes anything (docs/curate.md, "When the output would carry nothing"):
//   refused  the preset's speed term reads a speedup that no correct turn has (torch.compile
//            never timed and "baseline": "compiled"; timing off): every correct turn would get
//            the same reward, as if the config had no speed term;
//   warned   some correct turns lack that speedup (they score as a speedup of 0); drkernel's
//            coverage term with no correct turn profiled; every reward of the data the same
//            (nothing correct: a compile-only collection) - the rows are still written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dataset/run_source.h"
#include "rollout/reward_preset.h"

namespace kagent::rollout {

struct RewardSignal {
  std::optional<std::string> refusal;   // why the reward cannot tell correct turns apart
  std::vector<std::string> warnings;
};

// `rewards`: every turn's reward in the order of `runs`' turns (sample_rows' order).
RewardSignal check_reward_signal(const std::vector<dataset::SourceTrajectory>& runs, const RewardPreset& preset,
                                 const std::vector<double>& rewards);

}  // namespace kagent::rollout
