// The profile text: content, order, stated cuts, and a size that fits a few hundred tokens.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "profiler/kernel_groups.h"
#include "profiler/profile_builder.h"
#include "profiler/profile_text.h"
#include "profiler_test_util.h"

using namespace kagent::profiler;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

json kernel(const std::string& name, double ms, double share, bool own, const std::string& source) {
  return {{"name", name},
          {"own", own},
          {"source", source},
          {"calls", 1},
          {"total_ms", ms},
          {"share_pct", share},
          {"grid", {128, 64, 1}},
          {"block", {256, 1, 1}},
          {"registers", 122},
          {"static_smem", 16896},
          {"dynamic_smem", 0},
          {"local_mem_per_thread", 0},
          {"occupancy", {{"theoretical", 0.25}, {"active_blocks_per_sm", 2}, {"limiter", "registers"}}},
          {"waves", 31.03},
          {"counters", {{"warps_active_pct", 22.5}}},
          {"bound", {{"class", "compute"}}}};
}

// A profile with ten kernels whose names are long library templates.
json big_profile() {
  json kernels = json::array();
  kernels.push_back(kernel("void (anonymous namespace)::linear_bias_relu_kernel<false>(float const*, float const*, "
                           "float const*, float*, int, int, int, bool)",
                           0.36, 70.0, true, "own"));
  for (int i = 0; i < 9; ++i)
    kernels.push_back(kernel(fmt::format("void at::native::vectorized_elementwise_kernel<4, at::native::"
                                         "CUDAFunctor_add<float>, std::array<char*, {}ul> >(int, at::native::"
                                         "CUDAFunctor_add<float>, std::array<char*, 3ul>)",
                                         i),
                             0.017, 3.3, false, "aten"));
  return {{"kernels", kernels},
          {"totals", {{"kernels", 10}, {"launches", 10}, {"gpu_ms", 0.513}}},
          {"own_share", 0.70},
          {"own_kernels_listed", true},
          {"counters_available", true},
          {"measured_dram_gbps", 4021.0},
          {"dram", {{"bytes", 1.2e9}, {"duration_ms", 0.5}, {"gbps", 2400.0}, {"pct_of_measured_peak", 59.7}}},
          {"io", {{"bytes", 50e6}, {"gbps", 97.5}, {"pct_of_measured_peak", 2.4}}},
          {"bound",
           {{"class", "compute"},
            {"basis", "counters"},
            {"scope", "own kernels"},
            {"dram_pct", 22.0},
            {"sm_pct", 78.4},
            {"issue_pct", 61.0}}}};
}

}  // namespace

TEST_CASE("profile text: table by share, the rest summed, DRAM vs peak, bound with numbers, occupancy") {
  const std::string t = render_profile_text(big_profile());
  MESSAGE(t);
  CHECK(has(t, "10 kernel(s), 10 launch(es), GPU time 513.0us; own kernels 70.0% of it"));
  CHECK(has(t, "linear_bias_relu_kernel<false>"));
  CHECK_FALSE(has(t, "(anonymous namespace)"));
  CHECK(has(t, "128x64"));
  CHECK(has(t, "16.9KB"));
  // More kernels than table rows: the time by source and by name, then the busiest three.
  CHECK(has(t, "by source: own 70.2% (1 kernel, 1 launch), aten 29.8% (9 kernels, 9 launches)\n"));
  CHECK(has(t, "by name (10 kernels under 2 names, template instantiations summed)"));
  CHECK(has(t, "29.8%  153.0us      9       9 aten   at::native::vectorized_elementwise_kernel<...>\n"));
  CHECK(has(t, "table cut to 3 rows: 7 more kernels, 23.1% of GPU time"));
  CHECK(has(t, "DRAM: 1.20GB moved in 500.0us = 2400 GB/s, 60% of measured peak 4021 GB/s"));
  CHECK(has(t, "bound: compute (own kernels: DRAM 22% of peak, SM 78%, issue slots busy 61%"));
  CHECK(has(t, "occupancy linear_bias_relu_kernel<false>: 25% theoretical (2 blocks/SM, limited by registers), 22% "
               "achieved, 31.03 waves"));
  // The own kernel's row comes first: it has the largest share.
  CHECK(t.find("linear_bias_relu") < t.find("vectorized_elementwise"));
  // A few hundred tokens: ~4 characters per token.
  CHECK(t.size() < 1800);
  size_t longest = 0;
  for (size_t pos = 0, next; pos < t.size(); pos = next + 1) {
    next = t.find('\n', pos);
    if (next == std::string::npos) next = t.size();
    longest = std::max(longest, next - pos);
  }
  CHECK(longest < 160);
}

TEST_CASE("profile text: spills from compile resources, or local memory from the trace") {
  const json resources = json::array(
      {{{"kernel", "void (anonymous namespace)::linear_bias_relu_kernel<false>(float const*, int)"},
        {"registers", 255},
        {"spill_store_bytes", 24},
        {"spill_load_bytes", 32}},
       {{"kernel", "void (anonymous namespace)::other(float const*, int)"}, {"registers", 30}}});
  CHECK(has(render_profile_text(big_profile(), resources), "spills: linear_bias_relu_kernel<false> 24 B stores/32 B loads\n"));
  CHECK(has(render_profile_text(big_profile(), json::array()), "spills: none"));
  json p = big_profile();
  p["kernels"][0]["local_mem_per_thread"] = 48;
  CHECK(has(render_profile_text(p), "local memory (spills or local arrays): linear_bias_relu_kernel<false> 48 B/thread"));
  CHECK_FALSE(has(render_profile_text(big_profile()), "local memory"));
}

TEST_CASE("profile text without counters says why, cut to a stated length") {
  json p = big_profile();
  p["counters_available"] = false;
  p["counters_reason"] = "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: " + std::string(400, 'x');
  p.erase("dram");
  p["bound"] = {{"class", "unknown"}, {"basis", "none"}};
  const std::string t = render_profile_text(p);
  CHECK(has(t, "hardware counters: not available (cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
  CHECK(has(t, "...)\n"));
  CHECK(has(t, "bound: unknown (no hardware counters)"));
  CHECK_FALSE(has(t, "DRAM:"));
  CHECK_FALSE(has(t, "bound    "));  // no bound column without counters
}

TEST_CASE("profile text of failures and empty profiles") {
  CHECK(render_profile_text(json{{"error", "CUPTI_ERROR_NOT_SUPPORTED"}}) == "profile: failed (CUPTI_ERROR_NOT_SUPPORTED)\n");
  CHECK(has(render_profile_text(json::object()), "no kernel ran"));
  CHECK(render_profile_text(nullptr) == "profile: none\n");
}

TEST_CASE("profile text from build_profile, end to end") {
  ProfileCapture c;
  c.records = {test::record("(anonymous namespace)::gelu_vec4_kernel(float4 const*, float4*, long)", 0.08, 256, 65536, 16, 1)};
  c.limits = test::hopper();
  ProfileContext x;
  x.device = {{"measured_dram_gbps", 4000.0}};
  x.io_bytes = 268435456;  // 128 MiB in + 128 MiB out
  const std::string t = render_profile_text(build_profile(c, x));
  MESSAGE(t);
  CHECK(has(t, "1 kernel(s), 1 launch(es), GPU time 80.0us; own kernels 100.0% of it (own = not a known library)"));
  CHECK(has(t, "gelu_vec4_kernel"));
  CHECK(has(t, "inputs+weights+outputs: 268.4MB, 3355 GB/s effective, 84% of measured peak 4000 GB/s"));
  CHECK(has(t, "bound: memory (inputs+weights+outputs alone need 84% of measured DRAM peak; no counters)"));
  CHECK(has(t, "hardware counters: not available (not collected)"));
}

TEST_CASE("profile text: counters over the whole call say so on the DRAM line and in the note") {
  ProfileCapture c;
  for (uint32_t i = 0; i < 40; ++i)
    c.records.push_back(test::record("(anonymous namespace)::conv_relu(float const*, float*)", 0.05, 256, 1024, 32, i + 1,
                                     1000 + i * 100000));
  c.limits = test::hopper();
  c.counters.available = true;
  c.counters.status = "ok";
  c.counters.scope = "call";
  c.counters.ranges = {{{metric::kDuration, 4e6}, {metric::kDramRead, 6e9}, {metric::kDramWrite, 2e9},
                        {metric::kDramPct, 55}, {metric::kSmPct, 30}, {metric::kIssueActive, 20}}};
  ProfileContext x;
  x.device = {{"measured_dram_gbps", 4000.0}};
  const std::string t = render_profile_text(build_profile(c, x));
  MESSAGE(t);
  CHECK(has(t, "DRAM: 8.00GB moved in 4.00ms = 2000 GB/s, 50% of measured peak 4000 GB/s (whole call)"));
  CHECK(has(t, "bound: memory (whole call: DRAM 55% of peak"));
  CHECK(has(t, "hardware counters: counters over the whole call as one range (40 launches): not per kernel"));
}

namespace {
// A whole model's forward: 500 distinct kernels, 1076 launches, 4.86 ms. Own: 12 kernels (templated
// conv and fused BN-ReLU instantiations), cudnn 88, aten 400 elementwise instantiations.
json model_profile() {
  json kernels = json::array();
  auto add = [&](const std::string& name, double ms, int calls, bool own, const std::string& source) {
    json k = kernel(name, ms, 0, own, source);
    k["calls"] = calls;
    kernels.push_back(k);
  };
  for (int i = 0; i < 12; ++i)
    add(fmt::format("void (anonymous namespace)::{}<{}, 128>(float const*, float*, int)",
                    i % 2 ? "bn_relu_kernel" : "conv_tile_kernel", i),
        i % 2 ? 0.05 : 0.4, 25, true, "own");
  for (int i = 0; i < 88; ++i)
    add(fmt::format("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize{}x128x32_cudnn", 64 + i),
        0.02, 2, false, "cudnn");
  for (int i = 0; i < 400; ++i)
    add(fmt::format("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, std::array<char*, "
                    "{}ul> >(int, at::native::AddFunctor<float>, std::array<char*, 3ul>)",
                    i),
        0.001, 1 + i % 2, false, "aten");
  double total = 0;
  for (const auto& k : kernels) total += k["total_ms"].get<double>();
  for (auto& k : kernels) k["share_pct"] = 100.0 * k["total_ms"].get<double>() / total;
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const json& a, const json& b) { return a["total_ms"].get<double>() > b["total_ms"].get<double>(); });
  json p = big_profile();
  p["kernels"] = kernels;
  p["totals"] = {{"kernels", 500}, {"launches", 1076}, {"gpu_ms", total}};
  p["own_share"] = 2.7 / total;
  return p;
}
}  // namespace

TEST_CASE("profile text of a whole model: kernels grouped by name, the top ones by share, every kernel attributed") {
  const json p = model_profile();
  const std::string t = render_profile_text(p);
  MESSAGE(t);
  // Every kernel is in the by-source line: 12 own, 88 cudnn, 400 aten, launches 300 + 176 + 600.
  CHECK(has(t, "own kernels 55.6% of it"));
  CHECK(has(t, "by source: own 55.6% (12 kernels, 300 launches), cudnn 36.2% (88 kernels, 176 launches), aten 8.2% "
               "(400 kernels, 600 launches)"));
  // Template instantiations are one name each: 500 kernels under 88 + 2 + 1 names.
  CHECK(has(t, "by name (500 kernels under 91 names, template instantiations summed)"));
  CHECK(has(t, "conv_tile_kernel<...>"));
  CHECK(has(t, "  (cut to 6 names: 85 more names, 85 kernels"));
  // Not a 500-row table: a bounded number of lines and characters.
  size_t lines = 0;
  for (char c : t) lines += c == '\n';
  CHECK(lines < 25);
  CHECK(t.size() < 2400);

  // The same rows grouped in the JSON helpers cover every kernel and all the time.
  const json sources = group_kernels_by_source(p["kernels"]);
  int kernels = 0;
  double share = 0;
  for (const auto& g : sources) {
    kernels += g["kernels"].get<int>();
    share += g["share_pct"].get<double>();
  }
  CHECK(kernels == 500);
  CHECK(share == doctest::Approx(100.0).epsilon(0.002));
  const json names = group_kernels_by_name(p["kernels"]);
  REQUIRE(names.size() == 91);
  CHECK(names[0]["name"] == "conv_tile_kernel<...>");
  CHECK(names[0]["kernels"] == 6);
  CHECK(names[0]["calls"] == 150);
}
