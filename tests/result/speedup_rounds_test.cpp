// The speedup's paired rounds (result/speedup_rounds.h): what the ratios say, how a record keeps
// them, which speedup a reward reads, and the report's line.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "result/eval_report.h"
#include "result/eval_result.h"
#include "result/speedup_rounds.h"

using namespace kagent;

TEST_CASE("rounds: the median and geometric mean of the ratios, the interval from the smallest to the largest, its coverage") {
  const SpeedupRounds five = summarize_rounds({1.30, 1.10, 1.20, 1.25, 1.15});
  CHECK(five.ratios == std::vector<double>{1.30, 1.10, 1.20, 1.25, 1.15});  // in the rounds' order
  CHECK(five.median == doctest::Approx(1.20));
  CHECK(five.mean == doctest::Approx(std::pow(1.30 * 1.10 * 1.20 * 1.25 * 1.15, 0.2)));
  // Two kinds of placement, alternating: the median is one kind or the other, the mean between.
  const SpeedupRounds mixed = summarize_rounds({1.0, 1.2, 1.0, 1.2, 1.0});
  CHECK(mixed.median == doctest::Approx(1.0));
  CHECK(mixed.mean == doctest::Approx(std::pow(1.2, 0.4)));
  CHECK(five.low == doctest::Approx(1.10));
  CHECK(five.high == doctest::Approx(1.30));
  CHECK(five.coverage == doctest::Approx(0.9375));  // 1 - 2^(1-5)
  CHECK_FALSE(five.resolved);                       // 1.30 / 1.10 is 1.18
  const SpeedupRounds four = summarize_rounds({2.00, 2.04, 2.02, 2.01});
  CHECK(four.median == doctest::Approx(2.015));
  CHECK(four.coverage == doctest::Approx(0.875));
  CHECK(four.resolved);  // within 5%
  CHECK(summarize_rounds({1.0, 1.05}).resolved);
  CHECK_FALSE(summarize_rounds({1.0, 1.051}).resolved);
  CHECK_THROWS_AS(summarize_rounds({1.2}), std::invalid_argument);
  CHECK_THROWS_AS(summarize_rounds({1.2, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(summarize_rounds({1.2, std::nan("")}), std::invalid_argument);
}

TEST_CASE("a record keeps its rounds; a reward reads the timing's speedup, the rounds' geometric mean or their low end") {
  Timing t;
  t.speedup_eager = 1.4;
  CHECK(eager_speedup(t, SpeedupEstimate::RoundsLow) == 1.4);  // no rounds: the timing's
  t.rounds = summarize_rounds({1.30, 1.10, 1.20});
  const Timing back = nlohmann::json::parse(nlohmann::json(t).dump()).get<Timing>();
  REQUIRE(back.rounds);
  CHECK(back.rounds->ratios == t.rounds->ratios);
  CHECK(back.rounds->low == doctest::Approx(1.10));
  CHECK(back.rounds->coverage == doctest::Approx(0.75));
  CHECK(eager_speedup(back, SpeedupEstimate::Timing) == 1.4);
  CHECK(eager_speedup(back, SpeedupEstimate::Rounds) == doctest::Approx(std::cbrt(1.30 * 1.10 * 1.20)));
  // A record written before the mean was kept: it follows from the ratios.
  nlohmann::json old = nlohmann::json(t);
  old["rounds"].erase("mean");
  CHECK(old.get<Timing>().rounds->mean == doctest::Approx(std::cbrt(1.30 * 1.10 * 1.20)));
  CHECK(eager_speedup(back, SpeedupEstimate::RoundsLow) == doctest::Approx(1.10));
  CHECK_FALSE(nlohmann::json::parse(nlohmann::json(Timing{}).dump()).get<Timing>().rounds);  // an old record
  for (SpeedupEstimate e : {SpeedupEstimate::Timing, SpeedupEstimate::Rounds, SpeedupEstimate::RoundsLow})
    CHECK(speedup_estimate_from_name(to_string(e)) == e);
  CHECK_FALSE(speedup_estimate_from_name("mean"));
}

TEST_CASE("the report says how well the rounds know the speedup") {
  EvalResult r;
  r.status = Status::Correct;
  Timing t;
  TimingStats c;
  c.median_ms = 0.012;
  t.candidate = c;
  t.speedup_eager = 1.4;
  t.rounds = summarize_rounds({1.30, 1.10, 1.20, 1.25, 1.15});
  r.timing = t;
  const std::string loose = render_eval_report(r, "x");
  CHECK(loose.find("rounds    1.20x over eager (median 1.20x), between 1.10x and 1.30x over 5 paired rounds (94% "
                   "interval): NOT known within 5%") != std::string::npos);
  r.timing->rounds = summarize_rounds({1.20, 1.21, 1.22});
  CHECK(render_eval_report(r, "x").find("(75% interval): known within 5%") != std::string::npos);
}
