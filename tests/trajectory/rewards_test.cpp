#include <doctest/doctest.h>

#include "traj_test_util.h"
#include "trajectory/rewards.h"

using namespace kagent;
using namespace kagent::traj;
using namespace kagent::traj::testing;

TEST_CASE("rewards: Kevin score per turn") {
  CHECK(turn_score(make_turn(0, Status::Correct, 2.0)) == doctest::Approx(2.3));
  CHECK(turn_score(make_turn(0, Status::Correct, 0.5)) == doctest::Approx(0.8));
  CHECK(turn_score(make_turn(0, Status::Wrong, 3.0)) == 0.0);
  CHECK(turn_score(make_turn(0, Status::CompileError)) == 0.0);
  CHECK(turn_score(make_format_error_turn(0)) == 0.0);
  // An error on the turn overrides a correct verdict.
  Turn t = make_turn(0, Status::Correct, 2.0);
  t.error = TurnError{turn_error::kEval, "x"};
  CHECK(turn_score(t) == 0.0);
  // Correct but untimed: speedup counts as missing_speedup (0).
  CHECK(turn_score(make_turn(0, Status::Correct)) == doctest::Approx(0.3));
}

TEST_CASE("rewards: coefficients, baseline and cap are configurable") {
  RewardConfig c;
  c.correct_weight = 1.0;
  c.speedup_weight = 2.0;
  CHECK(turn_score(make_turn(0, Status::Correct, 1.5), c) == doctest::Approx(4.0));
  c.baseline = SpeedupBaseline::Compiled;  // make_turn: compiled speedup = eager / 2
  CHECK(turn_score(make_turn(0, Status::Correct, 1.5), c) == doctest::Approx(2.5));
  c.baseline = SpeedupBaseline::Eager;
  c.max_speedup = 1.0;
  CHECK(turn_score(make_turn(0, Status::Correct, 10.0), c) == doctest::Approx(3.0));
  CHECK(score(true, 2.0) == doctest::Approx(2.3));
  CHECK(score(false, 2.0) == 0.0);

  nlohmann::json j = c;
  RewardConfig back = j.get<RewardConfig>();
  CHECK(back.correct_weight == 1.0);
  CHECK(back.speedup_weight == 2.0);
  CHECK(back.max_speedup == 1.0);
  CHECK(nlohmann::json(back) == j);
  CHECK_THROWS(nlohmann::json{{"baseline", "nope"}}.get<RewardConfig>());
}

TEST_CASE("rewards: discounted returns on known sequences") {
  auto r = discounted_returns({1, 0, 2}, 0.5);
  REQUIRE(r.size() == 3);
  CHECK(r[0] == doctest::Approx(1.5));
  CHECK(r[1] == doctest::Approx(1.0));
  CHECK(r[2] == doctest::Approx(2.0));

  r = discounted_returns({0.3, 1.3, 0}, 0.4);
  CHECK(r[2] == doctest::Approx(0.0));
  CHECK(r[1] == doctest::Approx(1.3));
  CHECK(r[0] == doctest::Approx(0.3 + 0.4 * 1.3));

  r = discounted_returns({1, 1, 1, 1}, 0.0);
  for (double v : r) CHECK(v == doctest::Approx(1.0));
  CHECK(discounted_returns({}, 0.4).empty());
  r = discounted_returns({1, 1, 1}, 1.0);
  CHECK(r[0] == doctest::Approx(3.0));
}

TEST_CASE("rewards: best turn is the highest correct score, ties go earliest") {
  std::vector<Turn> turns = {make_turn(0, Status::Wrong, 9.0), make_turn(1, Status::Correct, 1.2),
                             make_turn(2, Status::Correct, 2.0), make_turn(3, Status::Correct, 2.0),
                             make_format_error_turn(4)};
  CHECK(best_turn(turns) == 2);
  CHECK_FALSE(best_turn({make_turn(0, Status::Wrong, 2.0), make_format_error_turn(1)}).has_value());
  CHECK_FALSE(best_turn({}).has_value());
  // A correct turn with a tiny speedup still beats no correct turn at all.
  CHECK(best_turn({make_turn(0, Status::Wrong), make_turn(1, Status::Correct, 0.01)}) == 1);
}

TEST_CASE("rewards: assign_rewards fills every turn and the best turn") {
  Trajectory t = make_trajectory(0);
  t.turns = {make_turn(0, Status::CompileError), make_turn(1, Status::Correct, 1.0),
             make_turn(2, Status::Correct, 3.0)};
  assign_rewards(t);
  CHECK(*t.turns[0].reward == 0.0);
  CHECK(*t.turns[1].reward == doctest::Approx(1.3));
  CHECK(*t.turns[2].reward == doctest::Approx(3.3));
  CHECK(*t.turns[2].return_ == doctest::Approx(3.3));
  CHECK(*t.turns[1].return_ == doctest::Approx(1.3 + 0.4 * 3.3));
  CHECK(*t.turns[0].return_ == doctest::Approx(0.4 * (1.3 + 0.4 * 3.3)));
  CHECK(t.best_turn == 2);
}
