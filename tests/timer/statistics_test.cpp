// kagent::stats on fixed sample sets (values checked against numpy).
#include <cmath>
#include <stdexcept>
#include <vector>

#include <doctest/doctest.h>

#include "timer/statistics.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

namespace stats = kagent::stats;
using V = std::vector<double>;

TEST_CASE("median, mean, min, max") {
  CHECK(stats::median(V{3, 1, 2}) == 2);
  CHECK(stats::median(V{4, 1, 3, 2}) == 2.5);
  CHECK(stats::median(V{7}) == 7);
  CHECK(stats::mean(V{1, 2, 3, 4}) == 2.5);
  CHECK(stats::min(V{3, -1, 2}) == -1);
  CHECK(stats::max(V{3, -1, 2}) == 3);
}

TEST_CASE("sample standard deviation and relative stdev") {
  const V xs{2, 4, 4, 4, 5, 5, 7, 9};  // population stdev 2, sample stdev sqrt(32/7)
  CHECK(stats::stdev(xs) == doctest::Approx(std::sqrt(32.0 / 7.0)));
  CHECK(stats::rel_stdev(xs) == doctest::Approx(std::sqrt(32.0 / 7.0) / 5.0));
  CHECK(stats::stdev(V{5}) == 0);
  CHECK(stats::rel_stdev(V{0, 0}) == 0);
  CHECK(std::isinf(stats::rel_stdev(V{-1, 1})));
}

TEST_CASE("percentile interpolates linearly like numpy") {
  const V xs{4, 1, 3, 2};
  CHECK(stats::percentile(xs, 0) == 1);
  CHECK(stats::percentile(xs, 100) == 4);
  CHECK(stats::percentile(xs, 25) == doctest::Approx(1.75));
  CHECK(stats::percentile(xs, 90) == doctest::Approx(3.7));
  CHECK(stats::percentile(V{1, 1, 5}, 75) == doctest::Approx(3.0));
  CHECK_THROWS_AS(stats::percentile(xs, 101), std::invalid_argument);
  CHECK_THROWS_AS(stats::percentile(xs, -1), std::invalid_argument);
}

TEST_CASE("interquartile noise: the bulk's spread, blind to rare outliers") {
  // numpy: (percentile(xs, 75) - percentile(xs, 25)) / 1.349 / median(xs)
  CHECK(stats::iqr_noise(V{1, 2, 3, 4}) == doctest::Approx((3.25 - 1.75) / 1.349 / 2.5));
  CHECK(stats::iqr_noise(V{5, 5, 5}) == 0);
  CHECK(stats::iqr_noise(V{0, 0, 0}) == 0);
  CHECK(std::isinf(stats::iqr_noise(V{-1, 0, 0, 1})));
  // 98 samples at 1.0 +- 0.1%, two at 6x: the stdev is far above 1%, the bulk's spread is not.
  V xs;
  for (int i = 0; i < 98; ++i) xs.push_back(1.0 + 0.001 * ((i % 5) - 2) / 2.0);
  xs.push_back(6.0);
  xs.push_back(6.0);
  CHECK(stats::rel_stdev(xs) > 0.5);
  CHECK(stats::iqr_noise(xs) < 0.001);
  // Two modes, 60% and 40%: the quartiles fall in different modes.
  V modes(60, 1.0);
  modes.insert(modes.end(), 40, 1.2);
  CHECK(stats::iqr_noise(modes) == doctest::Approx(0.2 / 1.349));
}

TEST_CASE("the median's confidence interval: order statistics n/2 -+ 1.96 sqrt(n)/2") {
  // 1..100: ranks floor(50 - 9.8) = 40 and ceil(50 + 9.8) = 60, median 50.5.
  V xs;
  for (int i = 100; i >= 1; --i) xs.push_back(i);
  CHECK(stats::median_ci_noise(xs) == doctest::Approx((60.0 - 40.0) / 2 / 50.5));
  // Few samples: the interval is clamped to the smallest and largest.
  CHECK(stats::median_ci_noise(V{1, 2, 3}) == doctest::Approx((3.0 - 1.0) / 2 / 2));
  CHECK(stats::median_ci_noise(V{4, 4, 4, 4}) == 0);
  CHECK(std::isinf(stats::median_ci_noise(V{-1, 0, 0, 0, 0, 0, 0, 0, 0, 1})));
  // 70% at 1.0 and 30% at 1.2: with enough samples both ends lie in the first mode, where the median is.
  V modes(700, 1.0);
  modes.insert(modes.end(), 300, 1.2);
  CHECK(stats::median_ci_noise(modes) == 0);
  // Half and half: the interval spans both modes.
  V halves(500, 1.0);
  halves.insert(halves.end(), 500, 1.2);
  CHECK(stats::median_ci_noise(halves) == doctest::Approx(0.1 / 1.1));
  CHECK_THROWS_AS(stats::median_ci_noise(V{}), std::invalid_argument);
}

TEST_CASE("empty sample sets throw") {
  const V none;
  CHECK_THROWS_AS(stats::mean(none), std::invalid_argument);
  CHECK_THROWS_AS(stats::median(none), std::invalid_argument);
  CHECK_THROWS_AS(stats::min(none), std::invalid_argument);
  CHECK_THROWS_AS(stats::max(none), std::invalid_argument);
  CHECK_THROWS_AS(stats::stdev(none), std::invalid_argument);
  CHECK_THROWS_AS(stats::percentile(none, 50), std::invalid_argument);
  CHECK_THROWS_AS(stats::iqr_noise(none), std::invalid_argument);
}

TEST_CASE("RunningStats matches the batch statistics") {
  const V xs{1.5, 2.25, 1.75, 9.0, 1.0, 1.125};
  stats::RunningStats r;
  CHECK(r.stdev() == 0);
  for (double x : xs) r.add(x);
  CHECK(r.count() == 6);
  CHECK(r.mean() == doctest::Approx(stats::mean(xs)));
  CHECK(r.sum() == doctest::Approx(16.625));
  CHECK(r.stdev() == doctest::Approx(stats::stdev(xs)));
  CHECK(r.rel_stdev() == doctest::Approx(stats::rel_stdev(xs)));
}
