// EvaluationPool::wait_until_waiting_below, the room a cluster node asks for before it takes a
// job: false while `n` requests or more wait for a worker, true as soon as a worker takes one.
// No worker is started: leases only hand workers over.
#include <chrono>
#include <optional>
#include <thread>

#include <doctest/doctest.h>

#include "evaluation/evaluation_pool.h"

using namespace kagent;
using namespace std::chrono_literals;

TEST_CASE("waiting below n: no room while requests wait for the busy worker, room once one is handed over") {
  EvaluationSettings s;
  s.hide_gpus = true;
  EvaluationPool pool(s);
  REQUIRE(pool.size() == 1);
  CHECK(pool.wait_until_waiting_below(1, 0ms));  // nothing waits
  std::optional<EvaluationPool::Lease> held(std::in_place, pool, "a");
  std::jthread second([&] { EvaluationPool::Lease lease(pool, "b"); });
  // The second request queues behind the held worker.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.wait_until_waiting_below(1, 0ms) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  CHECK_FALSE(pool.wait_until_waiting_below(1, 50ms));  // one waits: no room below 1
  CHECK(pool.wait_until_waiting_below(2, 0ms));         // but below 2
  // The worker freed from another thread: the wait ends when the request is handed over, not at
  // its timeout.
  std::jthread release([&] {
    std::this_thread::sleep_for(100ms);
    held.reset();
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK(pool.wait_until_waiting_below(1, 20s));
  CHECK(std::chrono::steady_clock::now() - start < 10s);
}
