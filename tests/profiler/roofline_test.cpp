// FLOPs, intensity and roofline position from counters (Nsight Compute's definitions), in
// the roofline JSON, in build_profile per kernel and for the call, and in the profile text.
#include <doctest/doctest.h>

#include "profiler/profile_builder.h"
#include "profiler/profile_text.h"
#include "profiler/roofline.h"
#include "profiler_test_util.h"

using namespace kagent::profiler;
using kagent::profiler::test::hopper;
using kagent::profiler::test::record;
using nlohmann::json;

namespace {

// H200-like peaks: 16896 FFMA per cycle at 1.98 GHz, 8448 DFMA, 4.8 TB/s.
RooflinePeaks h200() {
  RooflinePeaks p;
  p.fp32_flops_per_s = 2.0 * 16896 * 1.98e9;
  p.fp64_flops_per_s = 2.0 * 8448 * 1.98e9;
  p.dram_bytes_per_s = 4.8e12;
  p.dram_basis = "counters";
  return p;
}

std::map<std::string, double> counters(double ns, double bytes, double fadd, double fmul, double ffma) {
  return {{metric::kDuration, ns},          {metric::kDramRead, bytes / 2}, {metric::kDramWrite, bytes / 2},
          {metric::kDramPct, 80},           {metric::kIssueActive, 20},     {metric::kFadd, fadd},
          {metric::kFmul, fmul},            {metric::kFfma, ffma},          {metric::kDadd, 0},
          {metric::kDmul, 0},               {metric::kDfma, 0},             {metric::kHadd, 0},
          {metric::kHmul, 0},               {metric::kHfma, 0},             {metric::kFfmaPeak, 16896},
          {metric::kDfmaPeak, 8448},        {metric::kSmClock, 1.98e9},     {metric::kDramPeak, 1000},
          {metric::kDramClock, 4.8e9}};
}

}  // namespace

TEST_CASE("FLOPs are add + mul + 2 fma per precision") {
  const FlopCounts f = flops_from(10, 20, 30, 1, 2, 3, 4, 5, 6);
  CHECK(f.fp32 == 90);
  CHECK(f.fp64 == 9);
  CHECK(f.fp16 == 21);
  CHECK(f.total() == 120);
}

TEST_CASE("roofline: intensity, ridge, side, attainable and the achieved share") {
  // An elementwise kernel: 2 FLOP per 8 bytes, 268 MB in 60 us.
  const double bytes = 268e6, ns = 60e3;
  const json m = roofline_json({bytes / 4, 0, 0}, bytes, ns, h200());
  CHECK(m["intensity"].get<double>() == doctest::Approx(0.25));
  CHECK(m["precision"] == "fp32");
  CHECK(m["peak_gflops"].get<double>() == doctest::Approx(66908.16));
  CHECK(m["ridge"].get<double>() == doctest::Approx(66908.16 / 4800));
  CHECK(m["side"] == "memory");
  CHECK(m["attainable_gflops"].get<double>() == doctest::Approx(0.25 * 4800));
  CHECK(m["achieved_gflops"].get<double>() == doctest::Approx(67e6 / 60e3));
  CHECK(m["pct_of_attainable"].get<double>() == doctest::Approx(100.0 * (67e6 / 60e3) / 1200));
  // A GEMM: 2*4096^3 FLOP over 3 * 64 MB: right of the ridge, roof = peak.
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  const json g = roofline_json({flops, 0, 0}, 3 * 64e6, 3.4e6, h200());
  CHECK(g["side"] == "compute");
  CHECK(g["attainable_gflops"].get<double>() == doctest::Approx(66908.16));
  // FP64 work is held against the FP64 roof.
  CHECK(roofline_json({0, 1e9, 0}, 1e6, 1e6, h200())["precision"] == "fp64");
  // Without peaks: counts and intensity only; without bytes or time: nothing.
  const json bare = roofline_json({100, 0, 0}, 50, 10, std::nullopt);
  CHECK(bare["intensity"].get<double>() == 2.0);
  CHECK_FALSE(bare.contains("side"));
  CHECK(roofline_json({100, 0, 0}, 0, 10, h200()).is_null());
}

TEST_CASE("build_profile: per-kernel and whole-call roofline from the FLOP counters; the text shows them") {
  ProfileCapture c;
  const std::string gelu = "gelu_vec4_kernel(float4 const*, float4*, long)";
  const std::string tail = "gelu_scalar_kernel(float const*, float*, long, long)";
  c.records = {record(gelu, 0.06, 256, 32768, 16, 1, 1000), record(tail, 0.001, 256, 1, 16, 2, 200000)};
  c.limits = hopper();
  c.counters.available = true;
  c.counters.status = "ok";
  c.counters.passes = 2;
  c.counters.ranges = {counters(60e3, 268e6, 0, 0, 0.5e9), counters(1e3, 1e3, 0, 0, 100)};
  ProfileContext x;
  x.own_kernels = {"gelu_vec4_kernel", "gelu_scalar_kernel"};
  x.device = {{"name", "NVIDIA H200"}, {"measured_dram_gbps", 4000.0}};
  const json p = build_profile(c, x);
  const json& row = p["kernels"][0];
  REQUIRE(row.contains("roofline"));
  CHECK(row["roofline"]["flops"].get<double>() == doctest::Approx(1e9));
  CHECK(row["roofline"]["dram_bytes"].get<double>() == doctest::Approx(268e6));
  CHECK(row["roofline"]["peak_gbps"].get<double>() == doctest::Approx(4800));
  CHECK(row["roofline"]["dram_basis"] == "counters");
  CHECK(row["roofline"]["side"] == "memory");
  REQUIRE(p.contains("roofline"));
  CHECK(p["roofline"]["scope"] == "own kernels");
  CHECK(p["roofline"]["flops"].get<double>() == doctest::Approx(1e9 + 200));
  const std::string text = render_profile_text(p);
  INFO(text);
  CHECK(text.find("roofline gelu_vec4_kernel: 1 GFLOP fp32, 268 MB DRAM, 3.73 FLOP/B") != std::string::npos);
  CHECK(text.find("% of attainable (memory side of the ridge at 13.9 FLOP/B)") != std::string::npos);
  CHECK(text.find("roofline own kernels:") != std::string::npos);

  // Without the DRAM peak counters, the measured copy bandwidth is the memory roof.
  for (auto& r : c.counters.ranges) {
    r.erase(metric::kDramPeak);
    r.erase(metric::kDramClock);
  }
  const json q = build_profile(c, x);
  CHECK(q["kernels"][0]["roofline"]["dram_basis"] == "measured copy bandwidth");
  CHECK(q["kernels"][0]["roofline"]["peak_gbps"].get<double>() == doctest::Approx(4000));
  // Without FLOP counters (a one-pass budget dropped them): no roofline, the rest unchanged.
  for (auto& r : c.counters.ranges)
    for (const char* m : {metric::kFadd, metric::kFmul, metric::kFfma, metric::kDadd, metric::kDmul, metric::kDfma,
                          metric::kHadd, metric::kHmul, metric::kHfma})
      r.erase(m);
  const json n = build_profile(c, x);
  CHECK_FALSE(n["kernels"][0].contains("roofline"));
  CHECK_FALSE(n.contains("roofline"));
  CHECK(render_profile_text(n).find("roofline") == std::string::npos);
}
