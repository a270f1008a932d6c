// The rule for rewards with nothing to tell apart: a speed term reading a speedup no correct turn
// has is refused; partial gaps, an unprofiled coverage term and all-equal rewards are warned.
#include <doctest/doctest.h>

#include "rollout/returns.h"
#include "rollout/reward_signal.h"
#include "rollout_fixture.h"

using namespace kagent;
using namespace kagent::rollout;

namespace {

RewardSignal check(const std::vector<dataset::SourceTrajectory>& runs, const RewardPreset& p) {
  std::vector<double> rewards;
  for (const auto& src : runs)
    for (double r : turn_rewards(src.trajectory, p)) rewards.push_back(r);
  return check_reward_signal(runs, p, rewards);
}

bool any_has(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

// The 4-turn trajectory as a collection that never timed torch.compile leaves it.
traj::Trajectory never_compiled() {
  auto t = testing::four_turns();
  for (auto& turn : t.turns)
    if (turn.eval && turn.eval->timing) turn.eval->timing->speedup_compiled.reset();
  return t;
}

}  // namespace

TEST_CASE("reward signal: \"baseline\": \"compiled\" on data that never timed torch.compile is refused") {
  const std::vector<dataset::SourceTrajectory> runs = {{"r", never_compiled()}};
  RewardPreset kevin = reward_preset("kevin");
  kevin.compiled_baseline = true;
  const auto s = check(runs, kevin);
  REQUIRE(s.refusal);
  CHECK(*s.refusal == "none of the 2 correct turns has a speedup over torch.compile (\"baseline\": \"compiled\"): the kevin "
                      "reward would give each the same 0.3, with no speed signal");
  for (const char* name : {"drkernel", "tiered"}) {
    RewardPreset p = reward_preset(name);
    p.compiled_baseline = true;
    CAPTURE(name);
    CHECK(check(runs, p).refusal);
  }
  // Over eager the same data has its speed signal; a preset without a speed term has nothing to lose.
  CHECK_FALSE(check(runs, reward_preset("kevin")).refusal);
  RewardPreset flat = kevin;
  flat.speedup_weight = 0;
  CHECK_FALSE(check(runs, flat).refusal);
}

TEST_CASE("reward signal: warnings for a partial gap, an unprofiled coverage term, and all-equal rewards") {
  auto partial = testing::four_turns();
  partial.turns[2].eval->timing->speedup_compiled.reset();
  RewardPreset kevin = reward_preset("kevin");
  kevin.compiled_baseline = true;
  auto s = check({{"r", partial}}, kevin);
  CHECK_FALSE(s.refusal);
  CHECK(any_has(s.warnings, "1 of 2 correct turns have no speedup over torch.compile"));

  auto unprofiled = testing::four_turns();
  for (auto& turn : unprofiled.turns)
    if (turn.eval) turn.eval->profile = nullptr;
  s = check({{"r", unprofiled}}, reward_preset("drkernel"));
  CHECK_FALSE(s.refusal);
  CHECK(any_has(s.warnings, "drkernel's coverage term is 0 for each"));

  auto nothing_correct = testing::four_turns();  // a compile-only collection: nothing ran
  nothing_correct.turns[2].eval = testing::verdict(Status::Wrong, true);
  nothing_correct.turns[3].eval = testing::verdict(Status::Wrong, true);
  s = check({{"r", nothing_correct}}, kevin);
  CHECK_FALSE(s.refusal);  // the data, not the config, has nothing: written, with a warning
  CHECK(any_has(s.warnings, "every one of the 4 turns gets the reward 0 (0 correct under the strict policy)"));
  CHECK(check({{"r", testing::four_turns()}}, reward_preset("kevin")).warnings.empty());
}
