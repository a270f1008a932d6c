// Stopping criteria fed with synthetic sample sequences.
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "timer/stopping_criterion.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using kagent::AnyOf;
using kagent::CapCriterion;
using kagent::CapParams;
using kagent::IqrNoiseCriterion;
using kagent::MedianPrecisionCriterion;
using kagent::NoiseParams;
using kagent::StdRelCriterion;
using kagent::StoppingCriterion;

namespace {

// Feeds samples (seconds) with a fake wall clock advancing by `dt` per sample until the
// criterion finishes or the samples run out; returns how many were fed.
template <class Next>
int64_t feed(StoppingCriterion& c, Next next, int64_t limit, double dt = 1e-3) {
  int64_t n = 0;
  while (!c.is_finished() && n < limit) {
    c.add(next(n), dt * static_cast<double>(n + 1));
    ++n;
  }
  return n;
}

// Uniform in [-1, 1), deterministic.
struct Jitter {
  std::mt19937_64 gen{12345};
  double operator()() { return static_cast<double>(gen() >> 11) / 9007199254740992.0 * 2.0 - 1.0; }
};

// The stdev, the interquartile noise and the caps at their defaults: measure_cold's criteria
// without the median's precision.
AnyOf without_median() {
  std::vector<std::unique_ptr<StoppingCriterion>> v;
  v.push_back(std::make_unique<StdRelCriterion>(NoiseParams{}));
  v.push_back(std::make_unique<IqrNoiseCriterion>(NoiseParams{}));
  v.push_back(std::make_unique<CapCriterion>(CapParams{}));
  return AnyOf(std::move(v));
}

AnyOf default_combo(NoiseParams s, CapParams c) {
  std::vector<std::unique_ptr<StoppingCriterion>> v;
  v.push_back(std::make_unique<StdRelCriterion>(s));
  v.push_back(std::make_unique<CapCriterion>(c));
  return AnyOf(std::move(v));
}

}  // namespace

TEST_CASE("a stable series finishes with a noise reason, but not before min_samples") {
  StdRelCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0, .max_noise = 0.01});
  for (int i = 0; i < 19; ++i) {
    c.add(1e-3, 1e-3 * (i + 1));
    CHECK_FALSE(c.is_finished());
    CHECK(c.reason().empty());
  }
  c.add(1e-3, 0.02);
  CHECK(c.is_finished());
  CHECK(c.reason() == "noise 0.0% < 1.0%");
}

TEST_CASE("min_time is respected") {
  StdRelCriterion c(NoiseParams{.min_samples = 5, .min_time_s = 0.5, .max_noise = 0.01});
  // 1 ms per sample of wall time: needs 500 samples before it may stop.
  const int64_t n = feed(c, [](int64_t) { return 2e-3; }, 10000);
  CHECK(n == 500);
  CHECK(c.reason() == "noise 0.0% < 1.0%");
}

TEST_CASE("a noisy-then-stable series finishes on noise, below the target") {
  Jitter j;
  StdRelCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0.1, .max_noise = 0.01});
  auto series = [&](int64_t i) {
    if (i < 5) return 1e-3 * (1.0 + (i % 2 ? 0.1 : -0.1));  // warm-up-like transient, +-10%
    return 1e-3 * (1.0 + 0.001 * j());                      // then +-0.1%
  };
  const int64_t n = feed(c, series, 5000);
  REQUIRE(c.is_finished());
  MESSAGE("finished after " << n << ": " << c.reason());
  CHECK(n < 5000);
  CHECK(n > 100);  // the transient keeps the noise above 1% for a while
  CHECK(c.reason().rfind("noise ", 0) == 0);
  CHECK(c.reason().find("< 1.0%") != std::string::npos);
  CHECK(c.reason().find("1.0% < 1.0%") == std::string::npos);  // enough digits to show it is below
  CHECK(c.current_noise() < 0.01);
}

TEST_CASE("a stationary noisy series stops once its noise has converged") {
  Jitter j;
  StdRelCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0.1, .max_noise = 0.01});
  const int64_t n = feed(c, [&](int64_t) { return 1e-3 * (1.0 + 0.2 * j()); }, 100000);
  REQUIRE(c.is_finished());
  MESSAGE("finished after " << n << ": " << c.reason());
  CHECK(c.reason().rfind("noise converged at ", 0) == 0);
  CHECK(c.reason().find("(target 1.0%)") != std::string::npos);
  CHECK(n > static_cast<int64_t>(StdRelCriterion::kMinNoiseReadings));
  CHECK(n % StdRelCriterion::kNoiseCheckEvery == 0);
  // Uniform +-20% has a rel stdev of 0.2/sqrt(3) = 11.5%.
  CHECK(c.current_noise() == doctest::Approx(0.115).epsilon(0.1));
}

TEST_CASE("a forever-noisy series ends at the cap") {
  SUBCASE("iterations") {
    Jitter j;
    AnyOf c = default_combo({.min_samples = 20, .min_time_s = 0, .max_noise = 0.01},
                            {.max_iterations = 60, .max_time_s = 100});
    // Never quiet: each sample is 1x or 3x, and convergence needs more than 64 readings.
    const int64_t n = feed(c, [&](int64_t) { return j() > 0 ? 1e-3 : 3e-3; }, 100000);
    CHECK(n == 60);
    CHECK(c.reason() == "max iterations 60");
  }
  SUBCASE("time") {
    // A slow, noisy runner (50 ms per sample, 1x or 3x): the time cap comes long before
    // 64 noise readings could be judged converged.
    Jitter j;
    AnyOf c = default_combo({.min_samples = 20, .min_time_s = 0.1, .max_noise = 0.01},
                            {.max_iterations = 5000, .max_time_s = 2.0});
    const int64_t n = feed(c, [&](int64_t) { return j() > 0 ? 50e-3 : 150e-3; }, 1000000, 0.1);
    CHECK(n == 20);
    CHECK(c.reason() == "max time 2.0 s");
  }
}

TEST_CASE("caps win over min_samples") {
  AnyOf c = default_combo({.min_samples = 20, .min_time_s = 0, .max_noise = 0.01},
                          {.max_iterations = 10, .max_time_s = 100});
  const int64_t n = feed(c, [](int64_t) { return 1e-3; }, 1000);
  CHECK(n == 10);
  CHECK(c.reason() == "max iterations 10");
}

TEST_CASE("AnyOf reports the first finished criterion in order") {
  // Both finish on sample 20: the noise criterion comes first.
  AnyOf c = default_combo({.min_samples = 20, .min_time_s = 0, .max_noise = 0.01},
                          {.max_iterations = 20, .max_time_s = 100});
  CHECK(feed(c, [](int64_t) { return 1e-3; }, 1000) == 20);
  CHECK(c.reason() == "noise 0.0% < 1.0%");
  CHECK_THROWS(AnyOf({}));
}

TEST_CASE("interquartile noise ends a loop whose stdev rare outliers keep high") {
  // A 0.7 ms kernel within +-0.2%, with the 8th sample and one in 200 or so after it delayed by 1-6 ms at random (a
  // preempted launch; as in the real answers' loops that ran to the cap), 1 ms of wall time per
  // sample: the stdev stays far above 1% up to the 1 s cap, the middle half does not.
  Jitter j;
  auto series = [&](int64_t i) {
    const double u = j(), v = j();
    return i == 7 || u > 0.99 ? 0.7e-3 + 3.5e-3 + 2.5e-3 * v : 0.7e-3 * (1.0 + 0.002 * v);
  };
  SUBCASE("alone") {
    IqrNoiseCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0.1, .max_noise = 0.01});
    const int64_t n = feed(c, series, 100000);
    CHECK(n == 104);  // 0.1 s of loop, then the next look (every 8 samples)
    CHECK(c.reason().rfind("interquartile noise ", 0) == 0);
    CHECK(c.reason().find("< 1.0%") != std::string::npos);
    CHECK(c.current_noise() < 0.01);
  }
  SUBCASE("beside the stdev and the caps") {
    AnyOf c = without_median();
    CHECK(feed(c, series, 100000) == 104);
    CHECK(c.reason().rfind("interquartile noise ", 0) == 0);
    // Without it the same series runs to the cap: the outliers' stdev never settles below 1%.
    AnyOf old = default_combo({}, {});
    j = Jitter{};
    CHECK(feed(old, series, 100000) == 1000);
    CHECK(old.reason() == "max time 1.0 s");
  }
}

TEST_CASE("interquartile noise keeps going on two modes and respects its minimums") {
  SUBCASE("a second mode of 40% of the samples is noise") {
    IqrNoiseCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0, .max_noise = 0.01});
    CHECK(feed(c, [](int64_t i) { return i % 5 < 3 ? 1e-3 : 1.2e-3; }, 5000) == 5000);
    CHECK_FALSE(c.is_finished());
    CHECK(c.current_noise() > 0.1);
  }
  SUBCASE("min_samples, then every 8 samples") {
    IqrNoiseCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0, .max_noise = 0.01});
    CHECK(feed(c, [](int64_t) { return 1e-3; }, 1000) == 20);
    CHECK(c.reason() == "interquartile noise 0.0% < 1.0%");
    // Noisy for the first 30 samples: the look at 20 and 24 fails, the next looks every 8 find it.
    IqrNoiseCriterion d(NoiseParams{.min_samples = 20, .min_time_s = 0, .max_noise = 0.01});
    const int64_t n = feed(d, [](int64_t i) { return i < 30 ? (i % 2 ? 1e-3 : 2e-3) : 1e-3; }, 1000);
    CHECK(n % IqrNoiseCriterion::kCheckEvery == 0);
    CHECK(n > 30);
  }
  SUBCASE("min_time") {
    IqrNoiseCriterion c(NoiseParams{.min_samples = 5, .min_time_s = 0.5, .max_noise = 0.01});
    CHECK(feed(c, [](int64_t) { return 2e-3; }, 10000) == 504);
  }
}

TEST_CASE("the median's precision ends a loop whose every sample is noisy") {
  // A 5 ms level-3 model whose launches wait on the CPU: each sample within +-3% at random (a rel
  // stdev of 1.7%, an interquartile noise of 2.2%), 5 ms of wall time per sample. The stdev and
  // the interquartile range stay above 1% up to the 1 s cap (200 samples); the median is known to
  // +-1% after about 40.
  Jitter j;
  auto series = [&](int64_t) { return 5e-3 * (1.0 + 0.03 * j()); };
  SUBCASE("alone") {
    MedianPrecisionCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0.1, .max_noise = 0.01});
    const int64_t n = feed(c, series, 100000, 5e-3);
    MESSAGE("finished after " << n << ": " << c.reason());
    CHECK(n >= 24);
    CHECK(n <= 80);
    CHECK(n % MedianPrecisionCriterion::kCheckEvery == 0);
    CHECK(c.reason().rfind("median within ", 0) == 0);
    CHECK(c.reason().find("< 1.0% (95% confidence)") != std::string::npos);
    CHECK(c.current_noise() < 0.01);
  }
  SUBCASE("without it, the other criteria run to the cap") {
    AnyOf c = without_median();
    CHECK(feed(c, series, 100000, 5e-3) == 200);
    CHECK(c.reason() == "max time 1.0 s");
  }
}

TEST_CASE("the median's precision keeps going on two modes that share the middle, and respects its minimums") {
  SUBCASE("half and half") {
    MedianPrecisionCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0, .max_noise = 0.01});
    CHECK(feed(c, [](int64_t i) { return i % 2 ? 1e-3 : 1.2e-3; }, 5000) == 5000);
    CHECK_FALSE(c.is_finished());
  }
  SUBCASE("min_samples and min_time") {
    MedianPrecisionCriterion c(NoiseParams{.min_samples = 20, .min_time_s = 0, .max_noise = 0.01});
    CHECK(feed(c, [](int64_t) { return 1e-3; }, 1000) == 20);
    MedianPrecisionCriterion d(NoiseParams{.min_samples = 5, .min_time_s = 0.5, .max_noise = 0.01});
    CHECK(feed(d, [](int64_t) { return 2e-3; }, 10000) == 504);
  }
  CHECK_THROWS(MedianPrecisionCriterion(NoiseParams{.min_samples = 0}));
  CHECK_THROWS(MedianPrecisionCriterion(NoiseParams{.max_noise = 0}));
}

TEST_CASE("parameters are validated") {
  CHECK_THROWS(StdRelCriterion(NoiseParams{.min_samples = 0}));
  CHECK_THROWS(StdRelCriterion(NoiseParams{.max_noise = 0}));
  CHECK_THROWS(IqrNoiseCriterion(NoiseParams{.min_samples = 0}));
  CHECK_THROWS(IqrNoiseCriterion(NoiseParams{.min_time_s = -1}));
  CHECK_THROWS(IqrNoiseCriterion(NoiseParams{.max_noise = 0}));
  CHECK_THROWS(CapCriterion(CapParams{.max_iterations = 0}));
  CHECK_THROWS(CapCriterion(CapParams{.max_time_s = 0}));
}

TEST_CASE("reason formatting") {
  CHECK(kagent::format_percent(0.008) == "0.8%");
  CHECK(kagent::format_percent(0.01) == "1.0%");
  CHECK(kagent::format_percent(0.0095) == "0.95%");
  CHECK(kagent::format_percent(0.009996, 4) == "0.9996%");
  CHECK(kagent::format_seconds(2) == "2.0 s");
  CHECK(kagent::format_seconds(0.25) == "0.25 s");
}
