// Theoretical occupancy against cases worked out with the CUDA occupancy calculator's rules
// (register allocation per warp in units of 256, shared memory in units of 128 plus 1 KiB the
// driver reserves per block, 32 blocks and 64 warps per SM on sm_80/sm_90).
#include <doctest/doctest.h>

#include "profiler/occupancy.h"
#include "profiler_test_util.h"

using namespace kagent::profiler;
using kagent::profiler::test::ampere;
using kagent::profiler::test::hopper;
using kagent::profiler::test::record;

namespace {
KernelRecord launch(int threads, int blocks, int regs, int64_t dynamic_smem = 0, int64_t static_smem = 0) {
  KernelRecord k = record("k", 1.0, threads, blocks, regs);
  k.dynamic_smem = dynamic_smem;
  k.static_smem = static_smem;
  return k;
}
}  // namespace

TEST_CASE("full occupancy: 256 threads x 32 registers, one full wave on 132 SMs") {
  const Occupancy o = theoretical_occupancy(launch(256, 8 * 132, 32), hopper());
  REQUIRE(o.valid);
  CHECK(o.active_blocks_per_sm == 8);
  CHECK(o.active_warps_per_sm == 64);
  CHECK(o.max_warps_per_sm == 64);
  CHECK(o.theoretical == doctest::Approx(1.0));
  CHECK(o.waves == doctest::Approx(1.0));
  CHECK(o.limiter.find("warps") != std::string::npos);
}

TEST_CASE("registers limit: 64 per thread gives 4 blocks of 256 (50%), 128 gives 2 (25%)") {
  Occupancy o = theoretical_occupancy(launch(256, 1024, 64), hopper());
  CHECK(o.active_blocks_per_sm == 4);
  CHECK(o.theoretical == doctest::Approx(0.5));
  CHECK(o.limiter == "registers");
  o = theoretical_occupancy(launch(256, 1024, 128), hopper());
  CHECK(o.active_blocks_per_sm == 2);
  CHECK(o.theoretical == doctest::Approx(0.25));
  // 123 registers are allocated as 128 (granularity), the same 25%.
  CHECK(theoretical_occupancy(launch(256, 1024, 123), hopper()).active_blocks_per_sm == 2);
  CHECK(theoretical_occupancy(launch(256, 1024, 123), hopper()).waves == doctest::Approx(1024.0 / (2 * 132)));
}

TEST_CASE("shared memory limit: 100 KiB dynamic per block fits twice in 228 KiB (12.5% with 128 threads)") {
  const Occupancy o = theoretical_occupancy(launch(128, 264, 16, 100 * 1024), hopper());
  REQUIRE(o.valid);
  CHECK(o.active_blocks_per_sm == 2);
  CHECK(o.active_warps_per_sm == 8);
  CHECK(o.theoretical == doctest::Approx(0.125));
  CHECK(o.limiter == "shared memory");
  CHECK(o.waves == doctest::Approx(1.0));
}

TEST_CASE("block limit: one-warp blocks stop at 32 blocks per SM (50%)") {
  const Occupancy o = theoretical_occupancy(launch(32, 100, 16), hopper());
  CHECK(o.active_blocks_per_sm == 32);
  CHECK(o.theoretical == doctest::Approx(0.5));
  CHECK(o.limiter == "blocks");
  CHECK(o.waves == doctest::Approx(100.0 / (32 * 132)));
}

TEST_CASE("a launch that cannot fit: 1024 threads x 255 registers") {
  const Occupancy o = theoretical_occupancy(launch(1024, 10, 255), hopper());
  CHECK(o.valid);
  CHECK(o.active_blocks_per_sm == 0);
  CHECK(o.theoretical == 0.0);
  CHECK(o.waves == 0.0);
}

TEST_CASE("A100: 256 threads x 40 registers gives 6 blocks (75%)") {
  const Occupancy o = theoretical_occupancy(launch(256, 648, 40), ampere());
  CHECK(o.active_blocks_per_sm == 6);
  CHECK(o.theoretical == doctest::Approx(0.75));
  CHECK(o.limiter == "registers");
  CHECK(o.waves == doctest::Approx(1.0));
}

TEST_CASE("no block size or unknown device: not valid, says why") {
  CHECK_FALSE(theoretical_occupancy(launch(0, 10, 32), hopper()).valid);
  DeviceLimits future = hopper();
  future.cc_major = 42;
  const Occupancy o = theoretical_occupancy(launch(256, 10, 32), future);
  CHECK_FALSE(o.valid);
  CHECK(o.error.find("does not know") != std::string::npos);
}
