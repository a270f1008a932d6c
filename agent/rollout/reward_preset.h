// Named reward presets computed from one evaluation (the turn's verdict):
//   kevin     correct_weight*correct + speedup_weight*min(speedup, max_speedup)*correct
//             (Kevin: 0.3 and 1.0, speedup over eager, capped at 10 by default);
//   drkernel  when correct: 0.5 + 0.5*min(speedup, 3) + 0.5*time_coverage, where time_coverage
//             is the share of GPU time in the candidate's own kernels (the profile's own_share;
//             0 when not profiled); a rejected kernel or a flagged one (a decoy) scores 0;
//   tiered    fixed steps: no code or no verdict 0, compile error 0, compiled but not correct
//             0.1, correct 0.3, correct and speedup >= 1: 0.5, >= 1.5: 0.75, >= 2: 1.0.
// Every preset scores a rejected kernel 0, rejected under the preset's policy (result/policy.h):
// strict by default for all three (an RL reward must come from the model's own kernels), or
// kernelbench ("policy" in the reward config, or serve's --policy). Weights are configurable
// from JSON. "speedup_from" picks the speedup over eager a preset reads, where the evaluation ran
// paired rounds (--speedup-rounds; serve runs 5 by default): their geometric mean ("rounds", the
// default: over 30 real answers x 5 evaluations on an H200 its 90th-percentile spread was 1.043,
// the timing's 1.112), or the low end of their interval ("rounds_low": a speedup the timer cannot
// pin earns only what it surely is); without rounds, and with the compiled baseline, the timing's
// ("timing").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/eval_result.h"
#include "result/policy.h"

namespace kagent::rollout {

// What a reward reads of one turn.
struct TurnOutcome {
  bool compiled = false;            // the code compiled (and loaded)
  bool correct = false;
  bool rejected = false;            // a guard rejected it
  bool flagged = false;             // a guard flagged it (decoy, excessive speedup, ...)
  std::optional<double> speedup;    // under the preset's baseline
  std::optional<double> time_coverage;
};

struct RewardPreset {
  std::string name = "kevin";       // kevin | drkernel | tiered
  Policy policy = Policy::Strict;   // whose verdict the reward is computed from
  bool compiled_baseline = false;   // speedup over torch.compile instead of eager
  SpeedupEstimate speedup_from = SpeedupEstimate::Rounds;  // over eager only: the rounds pair eager
  // kevin
  double correct_weight = 0.3;
  double speedup_weight = 1.0;
  double max_speedup = 10.0;
  // drkernel
  double dk_correct = 0.5, dk_speedup = 0.5, dk_coverage = 0.5, dk_max_speedup = 3.0;
  // tiered: the step for "compiled" and "correct", then (speedup floor, step) bands, ascending
  double tier_compiled = 0.1, tier_correct = 0.3;
  std::vector<std::pair<double, double>> tier_bands = {{1.0, 0.5}, {1.5, 0.75}, {2.0, 1.0}};
};

// The defaults of a named preset; throws std::invalid_argument for an unknown name.
RewardPreset reward_preset(const std::string& name);
std::vector<std::string> reward_preset_names();

void to_json(nlohmann::json& j, const RewardPreset& p);
// Starts from the named preset's defaults ("name", default kevin) and overrides what is given.
void from_json(const nlohmann::json& j, RewardPreset& p);

// The turn under `policy`: its verdict and the findings' actions there.
TurnOutcome outcome_of(const EvalResult& r, bool compiled_baseline = false, Policy policy = Policy::Strict,
                       SpeedupEstimate speedup_from = SpeedupEstimate::Timing);
double reward(const TurnOutcome& o, const RewardPreset& p);
// No verdict at all (format error, LLM error): 0 under every preset.
inline double reward(const EvalResult& r, const RewardPreset& p) {
  return reward(outcome_of(r, p.compiled_baseline, p.policy, p.speedup_from), p);
}

}  // namespace kagent::rollout
