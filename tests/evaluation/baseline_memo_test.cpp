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
