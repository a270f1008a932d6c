// The evaluation pool's compile slots (EvaluationPool::CompileSlot): at most `compile_jobs`
// callers compile at once, the others wait their turn, and the pool's counters say how many
// compile and wait. No worker is started.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "common/cpu_affinity.h"
#include "evaluation/evaluation_pool.h"

using namespace kagent;

TEST_CASE("compile slots: at most compile_jobs at once, the others wait and then all finish") {
  EvaluationSettings s;
  s.hide_gpus = true;
  s.compile_jobs = 2;
  EvaluationPool pool(s);
  CHECK(pool.compile_slots() == 2);
  std::atomic<int> inside{0}, most{0}, waited{0};
  {
    std::vector<std::jthread> callers;
    for (int i = 0; i < 6; ++i)
      callers.emplace_back([&] {
        EvaluationPool::CompileSlot slot(pool);
        const int now = ++inside;
        int m = most.load();
        while (now > m && !most.compare_exchange_weak(m, now)) {}
        const PoolCounters c = pool.counters();
        waited = std::max(waited.load(), c.compile_waiting);
        CHECK(c.compiling <= 2);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        --inside;
      });
  }
  CHECK(most.load() == 2);
  CHECK(waited.load() > 0);  // six callers, two slots: some waited
  const PoolCounters done = pool.counters();
  CHECK(done.compiling == 0);
  CHECK(done.compile_waiting == 0);
  CHECK(done.compiles == 6);
}

TEST_CASE("compile slots default to three per four cores") {
  EvaluationSettings s;
  s.hide_gpus = true;
  EvaluationPool pool(s);
  CHECK(pool.compile_slots() == std::max(1u, usable_cpu_count() * 3 / 4));
}
