// The reward presets on the 4-turn trajectory, against values computed by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "rollout/returns.h"
#include "rollout_fixture.h"

using namespace kagent;
using namespace kagent::rollout;
using kagent::rollout::testing::four_turns;
using kagent::rollout::testing::verdict;

namespace {

void check_all(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-9));
}

}  // namespace

TEST_CASE("kevin: 0.3*correct + min(speedup, 10)*correct, and its returns with gamma 0.4") {
  const auto r = turn_rewards(four_turns(), reward_preset("kevin"));
  check_all(r, {0, 0, 0.3 + 1.2, 0.3 + 4.0});
  // R3 = 4.3; R2 = 1.5 + 0.4*4.3 = 3.22; R1 = 0.4*3.22 = 1.288; R0 = 0.4*1.288 = 0.5152
  check_all(discounted_returns(r, 0.4), {0.5152, 1.288, 3.22, 4.3});
  // The cap: a speedup of 40 counts 10.
  CHECK(reward(verdict(Status::Correct, true, 40.0), reward_preset("kevin")) == doctest::Approx(10.3));
}

TEST_CASE("drkernel: 0.5*correct + 0.5*min(speedup, 3) + 0.5*time_coverage; decoys and rejects score 0") {
  const auto r = turn_rewards(four_turns(), reward_preset("drkernel"));
  // turn 2: 0.5 + 0.6 + 0.3 = 1.4; turn 3: 0.5 + 0.5*3 + 0.45 = 2.45
  check_all(r, {0, 0, 1.4, 2.45});
  // R2 = 1.4 + 0.4*2.45 = 2.38; R1 = 0.952; R0 = 0.3808
  check_all(discounted_returns(r, 0.4), {0.3808, 0.952, 2.38, 2.45});
  auto decoy = verdict(Status::Correct, true, 2.0, 0.9);
  decoy.guards.push_back({"excessive_speedup", kGuardFlag, "too fast"});
  CHECK(reward(decoy, reward_preset("drkernel")) == 0.0);
  CHECK(reward(decoy, reward_preset("kevin")) == doctest::Approx(2.3));  // kevin does not read flags
  auto rejected = verdict(Status::Rejected, true, 2.0, 0.9);
  for (const auto& name : reward_preset_names()) CHECK(reward(rejected, reward_preset(name)) == 0.0);
  // Not profiled: coverage counts 0.
  CHECK(reward(verdict(Status::Correct, true, 1.0), reward_preset("drkernel")) == doctest::Approx(1.0));
}

TEST_CASE("tiered: fixed steps per outcome and speedup band") {
  const auto r = turn_rewards(four_turns(), reward_preset("tiered"));
  check_all(r, {0, 0.1, 0.5, 1.0});
  // R2 = 0.5 + 0.4 = 0.9; R1 = 0.1 + 0.36 = 0.46; R0 = 0.184
  check_all(discounted_returns(r, 0.4), {0.184, 0.46, 0.9, 1.0});
  const auto p = reward_preset("tiered");
  CHECK(reward(verdict(Status::CompileError, false), p) == 0.0);
  CHECK(reward(verdict(Status::Correct, true, 0.5), p) == doctest::Approx(0.3));
  CHECK(reward(verdict(Status::Correct, true, 1.6), p) == doctest::Approx(0.75));
}

TEST_CASE("presets read and write JSON; unknown names and baselines are refused") {
  const auto p = nlohmann::json{{"name", "kevin"}, {"max_speedup", 2.0}, {"baseline", "compiled"}}.get<RewardPreset>();
  CHECK(p.max_speedup == 2.0);
  CHECK(p.compiled_baseline);
  // speedup over torch.compile is half the eager one in the fixture: 4.0 -> 2.0, capped at 2
  CHECK(reward(verdict(Status::Correct, true, 4.0), p) == doctest::Approx(2.3));
  const auto t = nlohmann::json{{"name", "tiered"}, {"bands", {{{"speedup", 1.0}, {"reward", 0.7}}}}}.get<RewardPreset>();
  CHECK(reward(verdict(Status::Correct, true, 3.0), t) == doctest::Approx(0.7));
  CHECK(nlohmann::json(t).get<RewardPreset>().tier_bands == t.tier_bands);
  CHECK_THROWS_AS(reward_preset("grpo"), std::invalid_argument);
  CHECK_THROWS_AS((nlohmann::json{{"baseline", "fastest"}}.get<RewardPreset>()), std::invalid_argument);
}

TEST_CASE("speedup_from: the timing's speedup, or the rounds' geometric mean or low end where rounds ran") {
  auto timed = verdict(Status::Correct, true, 4.0);
  auto rounded = timed;
  rounded.timing->rounds = summarize_rounds({3.0, 3.5, 3.2});
  const auto kevin = [](const char* from) {
    return nlohmann::json{{"name", "kevin"}, {"speedup_from", from}}.get<RewardPreset>();
  };
  // The default reads the rounds' geometric mean where they ran (it repeats: reward_preset.h).
  CHECK(reward(rounded, reward_preset("kevin")) == doctest::Approx(0.3 + std::cbrt(3.0 * 3.5 * 3.2)));
  CHECK(reward(timed, reward_preset("kevin")) == doctest::Approx(4.3));
  CHECK(reward(rounded, kevin("timing")) == doctest::Approx(4.3));
  CHECK(reward(rounded, kevin("rounds")) == doctest::Approx(0.3 + std::cbrt(3.0 * 3.5 * 3.2)));
  CHECK(reward(rounded, kevin("rounds_low")) == doctest::Approx(0.3 + 3.0));
  CHECK(reward(timed, kevin("rounds_low")) == doctest::Approx(4.3));  // no rounds: the timing's
  CHECK(nlohmann::json(kevin("rounds_low")).get<RewardPreset>().speedup_from == SpeedupEstimate::RoundsLow);
  const auto tiered = nlohmann::json{{"name", "tiered"}, {"speedup_from", "rounds_low"}}.get<RewardPreset>();
  CHECK(reward(rounded, tiered) == doctest::Approx(1.0));
  CHECK_THROWS_AS((nlohmann::json{{"speedup_from", "mean"}}.get<RewardPreset>()), std::invalid_argument);
  CHECK_THROWS_AS((nlohmann::json{{"speedup_from", "rounds"}, {"baseline", "compiled"}}.get<RewardPreset>()),
                  std::invalid_argument);
  // The compiled baseline reads the timing, and its preset's JSON reads back (a record keeps it).
  const auto compiled = nlohmann::json{{"name", "kevin"}, {"baseline", "compiled"}}.get<RewardPreset>();
  CHECK(compiled.speedup_from == SpeedupEstimate::Timing);
  CHECK(nlohmann::json(compiled).get<RewardPreset>().compiled_baseline);
}

TEST_CASE("a reward config with a key its preset does not read, or a negative weight, is refused naming the key") {
  auto refused = [](const nlohmann::json& j) -> std::string {
    try {
      (void)j.get<RewardPreset>();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refused({{"name", "kevin"}, {"correct", 0.5}}).find("unknown key 'correct' for the kevin preset") == 0);
  CHECK(refused({{"name", "drkernel"}, {"correct_weight", 0.5}}).find("unknown key 'correct_weight'") == 0);
  CHECK(refused({{"name", "kevin"}, {"speedup_weight", -1}}) == "speedup_weight must be at least 0, not -1");
  CHECK(refused({{"name", "kevin"}, {"max_speedup", "10"}}) == "max_speedup must be a number, not \"10\"");
  CHECK(refused({{"name", "tiered"}, {"bands", {{{"speedup", 1.0}}}}}).find("a band is") == 0);
  CHECK(refused({{"name", "tiered"}, {"bands", {{{"speedup", 1.0}, {"reward", -0.1}}}}}) == "reward must be at least 0, not -0.1");
  // Every preset's own keys, as it writes them, are read back.
  for (const auto& name : reward_preset_names()) CHECK(refused(nlohmann::json(reward_preset(name))) == "accepted");
}

TEST_CASE("returns normalised within their task") {
  const auto n = normalise_by_group({1, 2, 3, 5}, {"a", "a", "a", "b"});
  check_all(n, {-1.224744871391589, 0, 1.224744871391589, 0});
}
