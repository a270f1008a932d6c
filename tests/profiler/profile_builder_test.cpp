// build_profile on hand-made captures: grouping, shares, counter mapping by launch order,
// DRAM figures against the measured peak, and the bound rule with its numbers.
#include <doctest/doctest.h>

#include "profiler/profile_builder.h"
#include "profiler_test_util.h"

using namespace kagent::profiler;
using kagent::profiler::test::hopper;
using kagent::profiler::test::record;
using nlohmann::json;

namespace {

const std::string kGemm = "void (anonymous namespace)::gemm<true>(float const*, float*)";
const std::string kBias = "(anonymous namespace)::bias(float*, int)";
const std::string kNvjet = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT";

std::map<std::string, double> range(double ns, double read, double write, double dram_pct, double sm_pct,
                                    double issue_pct) {
  return {{metric::kDuration, ns},      {metric::kDramRead, read}, {metric::kDramWrite, write},
          {metric::kDramPct, dram_pct}, {metric::kSmPct, sm_pct},  {metric::kIssueActive, issue_pct},
          {metric::kWarpsActive, 40.0}};
}

// Own GEMM (3 ms, compute), a cuBLAS kernel (1 ms, memory), own bias kernel twice (0.5 ms each, memory).
ProfileCapture capture(bool with_counters) {
  ProfileCapture c;
  // Out of start order on purpose: counters follow launch (correlation) order.
  c.records = {record(kGemm, 3.0, 256, 1024, 128, 10, 1000), record(kBias, 0.5, 256, 4096, 16, 13, 9000000),
               record(kNvjet, 1.0, 384, 132, 168, 11, 4000000), record(kBias, 0.5, 256, 4096, 16, 12, 6000000)};
  c.limits = hopper();
  if (with_counters) {
    c.counters.available = true;
    c.counters.status = "ok";
    c.counters.passes = 1;
    c.counters.ranges = {range(3e6, 0.3e9, 0.1e9, 10, 80, 70), range(1e6, 2e9, 1e9, 85, 40, 30),
                         range(0.5e6, 1.2e9, 0.6e9, 90, 20, 15), range(0.5e6, 1.2e9, 0.6e9, 90, 20, 15)};
  } else {
    c.counters.status = "not_permitted";
    c.counters.reason = "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  }
  return c;
}

ProfileContext context(int64_t io_bytes = 1'000'000'000) {
  ProfileContext x;
  x.own_kernels = {kGemm, "(anonymous namespace)::bias"};
  x.device = {{"name", "NVIDIA H200"}, {"measured_dram_gbps", 4000.0}};
  x.io_bytes = io_bytes;
  return x;
}

}  // namespace

TEST_CASE("classify_bound: the larger unit at >= 50% decides; both below is latency") {
  CHECK(classify_bound(85, 30, 20).kind == "memory");
  CHECK(classify_bound(10, 80, 70).kind == "compute");
  CHECK(classify_bound(50, 49, 10).kind == "memory");
  CHECK(classify_bound(49, 49.9, 90).kind == "latency");
  CHECK(classify_bound(20, 55, 50).kind == "compute");
  CHECK(classify_bound(70, 70, 50).kind == "memory");
  CHECK(classify_bound(61, 75, 50).kind == "compute");
  CHECK(classify_bound(20, 30, 15).dram_pct == 20);
}

TEST_CASE("build_profile: rows by time with shares, launches grouped, own vs library, occupancy") {
  const json p = build_profile(capture(true), context());
  REQUIRE(p["kernels"].size() == 3);
  const json& gemm = p["kernels"][0];
  CHECK(gemm["name"] == kGemm);
  CHECK(gemm["own"] == true);
  CHECK(gemm["source"] == "own");
  CHECK(gemm["calls"] == 1);
  CHECK(gemm["share_pct"].get<double>() == doctest::Approx(60.0));
  CHECK(gemm["registers"] == 128);
  CHECK(gemm["grid"] == json::array({1024, 1, 1}));
  CHECK(gemm["occupancy"]["theoretical"].get<double>() == doctest::Approx(0.25));
  CHECK(gemm["occupancy"]["limiter"] == "registers");
  CHECK(gemm["waves"].get<double>() == doctest::Approx(3.88));
  // Equal totals keep launch order: cuBLAS (first launched) before the bias kernel.
  CHECK(p["kernels"][1]["source"] == "cublas");
  CHECK(p["kernels"][1]["own"] == false);
  const json& bias = p["kernels"][2];
  CHECK(bias["calls"] == 2);
  CHECK(bias["total_ms"].get<double>() == doctest::Approx(1.0));
  CHECK(bias["mean_ms"].get<double>() == doctest::Approx(0.5));
  CHECK(p["totals"]["kernels"] == 3);
  CHECK(p["totals"]["launches"] == 4);
  CHECK(p["totals"]["gpu_ms"].get<double>() == doctest::Approx(5.0));
  // The time by source covers every launch: own 4 ms (the GEMM and two bias launches), cuBLAS 1 ms.
  REQUIRE(p["sources"].size() == 2);
  CHECK(p["sources"][0]["source"] == "own");
  CHECK(p["sources"][0]["kernels"] == 2);
  CHECK(p["sources"][0]["calls"] == 3);
  CHECK(p["sources"][0]["share_pct"].get<double>() == doctest::Approx(80.0));
  CHECK(p["sources"][1]["source"] == "cublas");
  CHECK(p["sources"][1]["calls"] == 1);
  CHECK(p["own_share"].get<double>() == doctest::Approx(0.8));
  CHECK(p["own_kernels_listed"] == true);
}

TEST_CASE("build_profile: counters per kernel by launch order, DRAM vs measured peak, bound of own kernels") {
  const json p = build_profile(capture(true), context());
  CHECK(p["counters_available"] == true);
  CHECK(p["counters"]["matched"] == true);
  const json& gemm = p["kernels"][0];
  CHECK(gemm["bound"]["class"] == "compute");
  CHECK(gemm["counters"]["dram_bytes"].get<double>() == doctest::Approx(0.4e9));
  CHECK(p["kernels"][1]["bound"]["class"] == "memory");
  CHECK(p["kernels"][1]["counters"]["dram_gbps"].get<double>() == doctest::Approx(3000.0));
  const json& bias = p["kernels"][2];
  CHECK(bias["bound"]["class"] == "memory");
  CHECK(bias["counters"]["dram_bytes"].get<double>() == doctest::Approx(3.6e9));
  CHECK(bias["counters"]["dram_gbps"].get<double>() == doctest::Approx(3600.0));
  // Whole call: 7 GB in 5 ms.
  CHECK(p["dram"]["bytes"].get<double>() == doctest::Approx(7.0e9));
  CHECK(p["dram"]["gbps"].get<double>() == doctest::Approx(1400.0));
  CHECK(p["dram"]["pct_of_measured_peak"].get<double>() == doctest::Approx(35.0));
  CHECK(p["io"]["gbps"].get<double>() == doctest::Approx(200.0));
  // Own kernels, time-weighted: DRAM (10*3 + 90*1)/4 = 30%, SM (80*3 + 20*1)/4 = 65% -> compute.
  CHECK(p["bound"]["class"] == "compute");
  CHECK(p["bound"]["scope"] == "own kernels");
  CHECK(p["bound"]["dram_pct"].get<double>() == doctest::Approx(30.0));
  CHECK(p["bound"]["sm_pct"].get<double>() == doctest::Approx(65.0));
  CHECK(p["bound"]["basis"] == "counters");
  CHECK(p["bound"]["rule"].get<std::string>().find("50%") != std::string::npos);
}

TEST_CASE("build_profile: without sm__throughput the busier of issue slots and tensor pipe stands in") {
  ProfileCapture c = capture(true);
  for (auto& r : c.counters.ranges) r.erase(metric::kSmPct);
  const json p = build_profile(c, context());
  CHECK(p["kernels"][0]["bound"]["sm_pct"].get<double>() == doctest::Approx(70.0));
  CHECK(p["kernels"][0]["bound"]["compute_metric"].get<std::string>().find("issue") != std::string::npos);
}

TEST_CASE("build_profile: a different launch count in the counter call is not attributed per kernel") {
  ProfileCapture c = capture(true);
  c.counters.ranges.pop_back();
  const json p = build_profile(c, context());
  CHECK(p["counters"]["matched"] == false);
  CHECK(p["counters"]["note"].get<std::string>().find("3 profiled launches vs 4 traced") != std::string::npos);
  CHECK(p["counters"]["note"].get<std::string>().find("the totals cover those profiled only") != std::string::npos);
  CHECK_FALSE(p["kernels"][0].contains("counters"));
  // The sums are of the profiled launches only, and say so.
  CHECK(p["bound"]["scope"] == "first 3 of 4 launches");
  CHECK(p["dram"]["scope"] == "first 3 of 4 launches");
  CHECK(p["dram"]["bytes"].get<double>() == doctest::Approx(5.2e9));
}

TEST_CASE("build_profile: counters over the whole call as one range give the call's totals, no kernel's") {
  ProfileCapture c = capture(true);
  c.counters.scope = "call";
  // One range over the four launches: 7 GB in the call's 6 ms (its span, gaps included).
  c.counters.ranges = {range(6e6, 4.7e9, 2.3e9, 50, 45, 40)};
  const json p = build_profile(c, context());
  CHECK(p["counters"]["scope"] == "call");
  CHECK(p["counters"]["matched"] == false);
  CHECK(p["counters"]["note"].get<std::string>().find("whole call as one range (4 launches)") != std::string::npos);
  for (const auto& k : p["kernels"]) CHECK_FALSE(k.contains("counters"));
  CHECK(p["dram"]["scope"] == "whole call");
  CHECK(p["dram"]["bytes"].get<double>() == doctest::Approx(7.0e9));
  CHECK(p["dram"]["gbps"].get<double>() == doctest::Approx(1166.7));  // rounded to 0.1
  CHECK(p["bound"]["scope"] == "whole call");
  CHECK(p["bound"]["dram_pct"].get<double>() == doctest::Approx(50.0));
  // A complete per-kernel capture keeps its scope.
  CHECK(build_profile(capture(true), context())["dram"]["scope"] == "all kernels");
}

TEST_CASE("build_profile without counters: says why; unavoidable traffic can still prove memory-bound") {
  json p = build_profile(capture(false), context());
  CHECK(p["counters_available"] == false);
  CHECK(p["counters_reason"].get<std::string>().find("INSUFFICIENT_PRIVILEGES") != std::string::npos);
  CHECK_FALSE(p.contains("dram"));
  CHECK(p["bound"]["class"] == "unknown");
  CHECK(p["bound"]["basis"] == "io_bytes");
  // 16 GB of inputs and outputs in 5 ms is 3200 GB/s, 80% of the measured peak.
  p = build_profile(capture(false), context(16'000'000'000));
  CHECK(p["bound"]["class"] == "memory");
  CHECK(p["bound"]["dram_pct"].get<double>() == doctest::Approx(80.0));
  ProfileContext no_peak = context();
  no_peak.device = json::object();
  p = build_profile(capture(false), no_peak);
  CHECK(p["bound"]["class"] == "unknown");
  CHECK(p["bound"]["basis"] == "none");
}

TEST_CASE("build_profile of a call that launched nothing") {
  const json p = build_profile(ProfileCapture{}, ProfileContext{});
  CHECK(p["kernels"].empty());
  CHECK(p["totals"]["launches"] == 0);
  CHECK(p["own_share"] == 0.0);
}
