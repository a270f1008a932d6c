// GpuLockUsage: the seconds a GPU's timing lock was held exclusively, shared by k workers, free,
// and shared while a worker waited to time, from a sequence of lock changes at known times.
#include <doctest/doctest.h>

#include <chrono>

#include "evaluation/gpu_lock_usage.h"

using namespace kagent;
using namespace std::chrono_literals;

TEST_CASE("GpuLockUsage splits the time by how the lock was held") {
  const auto t0 = GpuLockUsage::clock::now();
  GpuLockUsage u(3, t0);
  u.set(0, LockMode::Shared, false, t0 + 1s);     // 0-1 free
  u.set(1, LockMode::Shared, false, t0 + 2s);     // 1-2 shared by 1
  u.set(2, LockMode::Exclusive, true, t0 + 3s);   // 2-3 shared by 2; worker 2 now waits to time
  u.set(0, LockMode::None, false, t0 + 4s);       // 3-4 shared by 2, draining
  u.set(1, LockMode::None, false, t0 + 5s);       // 4-5 shared by 1, draining
  u.set(2, LockMode::Exclusive, false, t0 + 5s);  // 5-7 exclusive
  u.set(2, LockMode::None, false, t0 + 7s);
  const GpuLockTotals t = u.totals(t0 + 8s);      // 7-8 free
  CHECK(t.seconds == doctest::Approx(8));
  CHECK(t.free_seconds == doctest::Approx(2));
  CHECK(t.exclusive_seconds == doctest::Approx(2));
  CHECK(t.shared_seconds == doctest::Approx(4));
  REQUIRE(t.shared_by.size() == 3);
  CHECK(t.shared_by[0] == doctest::Approx(2));
  CHECK(t.shared_by[1] == doctest::Approx(2));
  CHECK(t.shared_by[2] == doctest::Approx(0));
  CHECK(t.draining_seconds == doctest::Approx(2));
}

TEST_CASE("GpuLockUsage: a wait holds nothing; a wait for shared is not draining; late lines add no time") {
  const auto t0 = GpuLockUsage::clock::now();
  GpuLockUsage u(2, t0);
  u.set(0, LockMode::Exclusive, false, t0);
  u.set(1, LockMode::Shared, true, t0 + 1s);  // waits for shared behind the timing
  u.set(0, LockMode::Shared, false, t0 + 2s);  // converts down: shared by 1 (worker 1 still waits)
  u.set(1, LockMode::Shared, false, t0 + 3s);
  u.set(0, LockMode::None, false, t0 + 2500ms);  // read after a later line: counted from t0 + 3s on
  const GpuLockTotals t = u.totals(t0 + 4s);
  CHECK(t.exclusive_seconds == doctest::Approx(2));
  CHECK(t.shared_by[0] == doctest::Approx(2));
  CHECK(t.draining_seconds == doctest::Approx(0));
  CHECK(t.seconds == doctest::Approx(4));
  // Reading the totals changes nothing.
  CHECK(u.totals(t0 + 4s).seconds == doctest::Approx(4));
}
