// BaselineMemo: a problem's baselines measured once per process, with concurrent askers waiting
// for the one measurement, failures not kept, and the eager time trusted only once measured
// with the GPU to itself.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "evaluation/baseline_memo.h"

using namespace kagent;
using namespace std::chrono_literals;

namespace {

Timing measured(double eager_ms, bool shared = false) {
  Timing t;
  TimingStats s;
  s.median_ms = eager_ms;
  t.eager = s;
  t.baseline_recheck = BaselineRecheck{eager_ms, eager_ms, false};
  GpuContention c;
  c.known = true;
  c.shared = shared;
  t.contention = c;
  return t;
}

}  // namespace

TEST_CASE("concurrent requests for one problem's baselines measure it once; the others get it as a cache hit") {
  BaselineMemo memo;
  std::atomic<int> measurements{0};
  std::vector<std::optional<Timing>> got(6);
  std::vector<std::thread> askers;
  for (size_t i = 0; i < got.size(); ++i)
    askers.emplace_back([&, i] {
      got[i] = memo.get("problem-a", [&] {
        ++measurements;
        std::this_thread::sleep_for(100ms);  // the others arrive while it measures
        return std::optional<Timing>(measured(2.5));
      });
    });
  for (auto& t : askers) t.join();
  CHECK(measurements == 1);
  int hits = 0;
  for (const auto& g : got) {
    REQUIRE(g);
    CHECK(g->eager->median_ms == 2.5);
    if (g->baseline_cache_hit) {
      ++hits;
      CHECK_FALSE(g->baseline_recheck);
    }
  }
  CHECK(hits == 5);
  CHECK(memo.trusted_eager_ms("problem-a") == 2.5);
  // Another problem is measured on its own.
  CHECK(memo.get("problem-b", [] { return std::optional<Timing>(measured(7.0)); })->eager->median_ms == 7.0);
  CHECK_FALSE(memo.trusted_eager_ms("problem-c"));
}

TEST_CASE("a failed measurement is not kept, and one taken beside another process is not trusted") {
  BaselineMemo memo;
  CHECK_FALSE(memo.get("p", [] { return std::optional<Timing>(); }));
  CHECK_FALSE(memo.trusted_eager_ms("p"));
  CHECK_THROWS_AS(memo.get("p", []() -> std::optional<Timing> { throw std::runtime_error("worker died"); }),
                  std::runtime_error);
  CHECK_FALSE(memo.trusted_eager_ms("p"));
  CHECK(memo.get("p", [] { return std::optional<Timing>(measured(1.0)); })->eager->median_ms == 1.0);
  CHECK(memo.trusted_eager_ms("p") == 1.0);

  CHECK(memo.get("q", [] { return std::optional<Timing>(measured(3.0, true)); }));
  CHECK_FALSE(memo.trusted_eager_ms("q"));  // the GPU was shared: the worker re-checks it
}

TEST_CASE("the eager time is not trusted while its measurement runs") {
  BaselineMemo memo;
  std::atomic<bool> inside{false}, release{false};
  std::thread first([&] {
    memo.get("p", [&] {
      inside = true;
      while (!release) std::this_thread::sleep_for(1ms);
      return std::optional<Timing>(measured(4.0));
    });
  });
  while (!inside) std::this_thread::sleep_for(1ms);
  CHECK_FALSE(memo.trusted_eager_ms("p"));
  release = true;
  first.join();
  CHECK(memo.trusted_eager_ms("p") == 4.0);
}

TEST_CASE("baselines an evaluation measured itself are trusted for the others; a cache hit or a shared GPU's are not") {
  BaselineMemo memo;
  Timing evaluation = measured(4.0);
  evaluation.candidate = TimingStats{};
  evaluation.speedup_eager = 2.0;
  memo.note_measured("p", evaluation);
  CHECK(memo.trusted_eager_ms("p") == 4.0);
  // Asked for later (a prompt), it is not measured again, and it carries the reference's times only.
  const auto got = memo.get("p", []() -> std::optional<Timing> { FAIL("measured again"); return std::nullopt; });
  REQUIRE(got);
  CHECK(got->eager->median_ms == 4.0);
  CHECK(got->baseline_cache_hit);
  CHECK_FALSE(got->candidate);
  CHECK_FALSE(got->speedup_eager);

  Timing hit = measured(5.0);
  hit.baseline_cache_hit = true;  // read from the cache (an earlier run's): the worker re-checks those
  memo.note_measured("q", hit);
  CHECK_FALSE(memo.trusted_eager_ms("q"));
  memo.note_measured("r", measured(6.0, true));
  CHECK_FALSE(memo.trusted_eager_ms("r"));
  memo.note_measured("s", Timing{});  // no eager time at all
  CHECK_FALSE(memo.trusted_eager_ms("s"));

  // A key already measured keeps its measurement.
  CHECK(memo.get("t", [] { return std::optional<Timing>(measured(1.0)); }));
  memo.note_measured("t", measured(9.0));
  CHECK(memo.trusted_eager_ms("t") == 1.0);
}
