// The profiler on a real GPU: kernel activity records (launch configuration, registers, shared
// memory), own vs library attribution next to torch::matmul, and the range profiler's bound
// call on a memory-bound elementwise kernel and a compute-bound tiled SGEMM. Without a GPU the
// suite is skipped (gpu_test_main.cpp); without counter permission the metric part prints
// "not measured: hardware counters: <reason>" and the activity part still runs.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "profiler/kernel_activity.h"
#include "profiler/kernel_attribution.h"
#include "profiler/kernel_names.h"
#include "profiler/profile_capture.h"
#include "profiler/profile_text.h"
#include "profiler_kernels.h"
#include "cuda/cuda_error.h"
#include "timer/l2_flush.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using namespace kagent::profiler;
using kagent_probe::LaunchInfo;


namespace {

constexpr int64_t kElements = int64_t{64} << 20;  // 256 MiB in, 256 MiB out: far beyond L2
constexpr int kGemmN = 4096;  // several waves: a partial wave would read as latency-bound


struct Buffers {
  at::Tensor x, y, a, b, c;
  Buffers() {
    const auto opts = at::device(at::kCUDA).dtype(at::kFloat);
    x = at::randn({kElements}, opts);
    y = at::empty_like(x);
    a = at::randn({kGemmN, kGemmN}, opts);
    b = at::randn({kGemmN, kGemmN}, opts);
    c = at::empty_like(a);
  }
  LaunchInfo scale_bias() {
    return kagent_probe::launch_scale_bias(x.data_ptr<float>(), y.data_ptr<float>(), kElements, 2.0f, 1.0f, nullptr);
  }
  LaunchInfo sgemm() {
    return kagent_probe::launch_tiled_sgemm(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), kGemmN,
                                            nullptr);
  }
};

void check_record(const KernelRecord& r, const LaunchInfo& li, uint64_t window_start) {
  INFO(r.name);
  CHECK(r.grid == li.grid);
  CHECK(r.block == li.block);
  // CUPTI reports registers as allocated (whole allocation units of 8), the function attribute as compiled.
  CHECK(r.registers >= li.registers);
  CHECK(r.registers <= (li.registers + 7) / 8 * 8);
  CHECK(r.static_smem == li.static_smem);
  CHECK(r.dynamic_smem == 0);
  CHECK(r.local_mem_per_thread == li.local_bytes);
  CHECK(r.start_ns >= window_start);
  CHECK(r.end_ns > r.start_ns);
  CHECK(r.duration_ms() > 0.001);
  CHECK(r.duration_ms() < 1000);
  CHECK(r.mangled.substr(0, 2) == "_Z");
  CHECK(r.correlation_id != 0);
}

// Device-to-device copy bandwidth (read + write), the peak the profile compares against.
double measure_copy_gbps(const at::Tensor& src, at::Tensor& dst) {
  cudaEvent_t start = nullptr, stop = nullptr;
  KAGENT_CUDA_CHECK(cudaEventCreate(&start));
  KAGENT_CUDA_CHECK(cudaEventCreate(&stop));
  float best = 1e30f;
  dst.copy_(src);
  for (int i = 0; i < 5; ++i) {
    KAGENT_CUDA_CHECK(cudaEventRecord(start, nullptr));
    dst.copy_(src);
    KAGENT_CUDA_CHECK(cudaEventRecord(stop, nullptr));
    KAGENT_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    KAGENT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  return 2.0 * static_cast<double>(src.nbytes()) / (best * 1e6);
}

}  // namespace

TEST_CASE("kernel activity: every launch with its grid, block, registers and shared memory") {
  Buffers buf;
  buf.scale_bias();  // lazy module loading stays out of the window
  buf.sgemm();
  KAGENT_CUDA_CHECK(cudaDeviceSynchronize());

  KernelActivity activity;
  CHECK_THROWS_AS(KernelActivity(), ProfilerError);  // one live instance per process
  const uint64_t t0 = KernelActivity::now_ns();
  activity.start();
  const LaunchInfo e = buf.scale_bias();
  const LaunchInfo g = buf.sgemm();
  const std::vector<KernelRecord> records = activity.stop();
  CHECK(activity.dropped() == 0);
  REQUIRE(records.size() == 2);
  CHECK(qualified_name(records[0].name) == e.name);  // by start time
  CHECK(qualified_name(records[1].name) == g.name);
  check_record(records[0], e, t0);
  check_record(records[1], g, t0);
  CHECK(records[1].start_ns >= records[0].end_ns);  // same stream: in order
  CHECK(records[0].correlation_id < records[1].correlation_id);
  CHECK(records[1].static_smem == 2 * 8 * 128 * 4);
  std::printf("activity: %s grid %dx%d block %d regs %d %.3f ms; %s grid %dx%d block %d regs %d smem %lld %.3f ms\n",
              e.name, records[0].grid[0], records[0].grid[1], records[0].block[0], records[0].registers,
              records[0].duration_ms(), g.name, records[1].grid[0], records[1].grid[1], records[1].block[0],
              records[1].registers, static_cast<long long>(records[1].static_smem), records[1].duration_ms());

  // A second window sees only its own launches.
  activity.start();
  buf.scale_bias();
  CHECK(activity.stop().size() == 1);
}

TEST_CASE("attribution: the candidate's kernels are own, torch::matmul's are library") {
  Buffers buf;
  (void)at::matmul(buf.a, buf.b);  // cuBLAS handle and kernels loaded before the window
  buf.sgemm();
  KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<KernelRecord> records;
  {
    KernelActivity activity;
    activity.start();
    buf.sgemm();
    (void)at::matmul(buf.a, buf.b);
    records = activity.stop();
  }
  REQUIRE(records.size() >= 2);
  for (const auto& own_list : {std::vector<std::string>{"kagent_probe::tiled_sgemm_kernel", "kagent_probe::scale_bias_kernel"},
                               std::vector<std::string>{}}) {
    const Attribution a = attribute_kernels(records, own_list);
    for (size_t i = 0; i < records.size(); ++i) {
      INFO(records[i].name << " -> " << a.kernels[i].source);
      const bool ours = qualified_name(records[i].name) == "kagent_probe::tiled_sgemm_kernel";
      CHECK(a.kernels[i].own == ours);
      if (!ours) CHECK(a.kernels[i].source != "other");
    }
    CHECK(a.own_share > 0.0);
    CHECK(a.own_share < 1.0);
  }
  std::printf("attribution: torch::matmul ran");
  for (const auto& r : records)
    if (qualified_name(r.name) != "kagent_probe::tiled_sgemm_kernel")
      std::printf(" %s [%s]", short_kernel_name(r.name, 60).c_str(), library_of(r.name).c_str());
  std::printf("\n");
}

TEST_CASE("range profiler: the elementwise kernel is memory-bound, the tiled SGEMM compute-bound") {
  Buffers buf;
  buf.scale_bias();
  buf.sgemm();
  kagent::L2Flush l2;
  const auto flush = [&] {
    l2.flush(nullptr);
    KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
  };
  const auto run_once = [&] {
    buf.scale_bias();
    buf.sgemm();
    KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
  };
  const auto t0 = std::chrono::steady_clock::now();
  const ProfileCapture cap = capture_profile(run_once, flush);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(cap.records.size() == 2);
  REQUIRE(cap.limits.has_value());

  ProfileContext ctx;
  ctx.own_kernels = {"kagent_probe::scale_bias_kernel", "kagent_probe::tiled_sgemm_kernel"};
  ctx.device = {{"measured_dram_gbps", measure_copy_gbps(buf.x, buf.y)}};
  ctx.io_bytes = 2 * kElements * 4 + 3 * int64_t{kGemmN} * kGemmN * 4;
  const nlohmann::json p = build_profile(cap, ctx);
  std::printf("%s", render_profile_text(p).c_str());
  REQUIRE(p["kernels"].size() == 2);
  CHECK(p["own_share"].get<double>() == doctest::Approx(1.0));
  for (const auto& k : p["kernels"]) {
    CHECK(k["occupancy"]["theoretical"].get<double>() > 0.0);
    CHECK(k["waves"].get<double>() > 0.0);
  }

  if (!cap.counters.available) {
    std::printf("not measured: hardware counters: %s\n", cap.counters.reason.c_str());
    std::printf("profiler gpu: activity ok (2 kernels), counters unavailable (%s: %s), capture %.2f s\n",
                cap.counters.status.c_str(), cap.counters.reason.c_str(), seconds);
    CHECK(p["counters_available"] == false);
    CHECK_FALSE(p["counters_reason"].get<std::string>().empty());
    return;
  }
  CHECK(cap.counters.passes <= 2);  // speed of light in one pass, FLOP counters and peaks in a second
  CHECK(cap.counters.ranges.size() == 2);
  CHECK(p["counters"]["matched"] == true);
  const nlohmann::json* elementwise = nullptr;
  const nlohmann::json* gemm = nullptr;
  for (const auto& k : p["kernels"]) {
    const std::string q = qualified_name(k["name"].get<std::string>());
    if (q == "kagent_probe::scale_bias_kernel") elementwise = &k;
    if (q == "kagent_probe::tiled_sgemm_kernel") gemm = &k;
  }
  REQUIRE(elementwise);
  REQUIRE(gemm);
  INFO(p.dump(1));
  CHECK((*elementwise)["bound"]["class"] == "memory");
  CHECK((*gemm)["bound"]["class"] == "compute");
  // The elementwise kernel reads its whole input from DRAM (L2 flushed before); writes may
  // partly stay in L2 when the kernel ends.
  const auto& ec = (*elementwise)["counters"];
  CHECK(ec["dram_read_bytes"].get<double>() == doctest::Approx(kElements * 4.0).epsilon(0.10));
  CHECK(ec["dram_bytes"].get<double>() > 0.75 * 2 * kElements * 4.0);
  CHECK((*elementwise)["bound"]["dram_pct"].get<double>() > 60.0);
  CHECK((*gemm)["bound"]["sm_pct"].get<double>() > 50.0);
  CHECK(p["bound"]["basis"] == "counters");
  // FLOPs from the counters: one FFMA per element (2 FLOP), 2 N^3 for the SGEMM; memory side of
  // the roofline for the first, compute side for the second.
  REQUIRE((*elementwise).contains("roofline"));
  REQUIRE((*gemm).contains("roofline"));
  const auto& er = (*elementwise)["roofline"];
  const auto& gr = (*gemm)["roofline"];
  CHECK(er["fp32_flops"].get<double>() == doctest::Approx(2.0 * kElements).epsilon(0.001));
  CHECK(gr["fp32_flops"].get<double>() == doctest::Approx(2.0 * kGemmN * kGemmN * double(kGemmN)).epsilon(0.01));
  CHECK(er["side"] == "memory");
  CHECK(gr["side"] == "compute");
  CHECK(er["peak_gbps"].get<double>() > 1000.0);
  CHECK(gr["peak_gflops"].get<double>() > 10000.0);
  std::printf("profiler gpu roofline: scale_bias %.3g FLOP, %.3g B, %.3g FLOP/B, %s side (ridge %.3g), %.0f%% of attainable; "
              "tiled_sgemm %.3g FLOP, %.3g FLOP/B, %s side, %.0f%% of attainable (peak %.0f GFLOP/s, %.0f GB/s)\n",
              er["flops"].get<double>(), er["dram_bytes"].get<double>(), er["intensity"].get<double>(),
              er["side"].get<std::string>().c_str(), er["ridge"].get<double>(), er["pct_of_attainable"].get<double>(),
              gr["flops"].get<double>(), gr["intensity"].get<double>(), gr["side"].get<std::string>().c_str(),
              gr["pct_of_attainable"].get<double>(), gr["peak_gflops"].get<double>(), gr["peak_gbps"].get<double>());

  const auto& gc = (*gemm)["counters"];
  const double tflops = 2.0 * kGemmN * kGemmN * kGemmN / (gc["duration_ms"].get<double>() * 1e9);
  std::printf(
      "profiler gpu: scale_bias %.0f GB/s (DRAM %.0f%%, SM %.0f%%) %s; tiled_sgemm %.1f TFLOP/s (SM %.0f%%, DRAM %.0f%%, "
      "issue %.0f%%) %s; chip %s, %zu pass(es), %zu metrics, dropped [%s]; capture %.2f s (counters %.2f s)\n",
      ec.value("dram_gbps", 0.0), (*elementwise)["bound"]["dram_pct"].get<double>(),
      (*elementwise)["bound"]["sm_pct"].get<double>(), (*elementwise)["bound"]["class"].get<std::string>().c_str(),
      tflops, (*gemm)["bound"]["sm_pct"].get<double>(), (*gemm)["bound"]["dram_pct"].get<double>(),
      (*gemm)["bound"]["issue_pct"].get<double>(), (*gemm)["bound"]["class"].get<std::string>().c_str(),
      cap.counters.chip.c_str(), cap.counters.passes, cap.counters.metrics.size(),
      nlohmann::json(cap.counters.dropped).dump().c_str(), seconds, cap.counters.seconds);
}

TEST_CASE("range profiler: reused across calls, a failing call passes its exception through, CUPTI stays usable") {
  Buffers buf;
  buf.scale_bias();
  KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
  RangeProfilerOptions opts;
  opts.metrics = {metric::kDuration, metric::kDramRead, metric::kDramWrite};
  // Room for 20 launches per kernel: DRAM counters alone cost little per range (the worker's
  // speed-of-light set about 1 ms each, hence its default of 4).
  opts.per_kernel_launches = 32;
  std::optional<RangeProfiler> kept(std::in_place, opts);  // keeps its session: ended below before the one-offs
  RangeProfiler& profiler = *kept;
  // Nothing launched: no ranges, and no exception either way.
  const RangeProfileResult empty = profiler.profile([] {}, nullptr);
  CHECK(empty.ranges.empty());
  if (!empty.available) {
    std::printf("not measured: hardware counters: %s\n", empty.reason.c_str());
    CHECK_FALSE(empty.reason.empty());
    return;
  }
  CHECK_THROWS_WITH_AS(profiler.profile([] { throw std::runtime_error("candidate failed"); }, nullptr),
                       "candidate failed", std::runtime_error);
  const RangeProfileResult again = profiler.profile([&] { buf.scale_bias(); }, nullptr);
  REQUIRE(again.available);
  REQUIRE(again.ranges.size() == 1);
  CHECK(again.ranges[0].at(metric::kDramRead) > 0.5 * kElements * 4);
  CHECK(again.metrics.size() == 3);
  CHECK(again.passes == 1);
  const RangeProfileResult third = profiler.profile([&] { buf.scale_bias(); }, nullptr);
  REQUIRE(third.available);
  REQUIRE(third.ranges.size() == 1);
  // The kept session's image is emptied between calls (a copy of its first initialisation):
  // the third call counts its own traffic, not the second's added to it.
  CHECK(third.ranges[0].at(metric::kDramRead) > 0.5 * kElements * 4);
  CHECK(third.ranges[0].at(metric::kDramRead) < 1.5 * again.ranges[0].at(metric::kDramRead));
  CHECK(third.capacity == 256);  // no hint: room for max_ranges
  // Sized to the launches the caller expects: twice them, at least 16.
  const RangeProfileResult sized = profiler.profile([&] { buf.scale_bias(); }, nullptr, 1);
  REQUIRE(sized.available);
  CHECK(sized.capacity == 16);
  REQUIRE(sized.ranges.size() == 1);
  CHECK(sized.ranges[0].at(metric::kDramRead) > 0.5 * kElements * 4);
  CHECK(sized.image_bytes < third.image_bytes);
  // More launches than the image sized to the hint holds: profiled again with room for all.
  const auto twenty = [&] {
    for (int i = 0; i < 20; ++i) buf.scale_bias();
  };
  const RangeProfileResult more = profiler.profile(twenty, nullptr, 1);
  REQUIRE(more.available);
  CHECK(more.capacity == 256);
  CHECK(more.ranges_dropped == 0);
  CHECK(more.ranges.size() == 20);
  const RangeProfileResult fitting = profiler.profile(twenty, nullptr, 20);
  REQUIRE(fitting.available);
  CHECK(fitting.capacity == 64);
  CHECK(fitting.ranges.size() == 20);
  CHECK(fitting.scope == "kernel");
  // More launches than get counters per kernel (options.per_kernel_launches): one range over the
  // whole call, whose totals cover every launch.
  const auto forty = [&] {
    for (int i = 0; i < 40; ++i) buf.scale_bias();
  };
  const RangeProfileResult whole = profiler.profile(forty, nullptr, 40);
  REQUIRE_MESSAGE(whole.available, whole.reason);
  CHECK(whole.scope == "call");
  REQUIRE(whole.ranges.size() == 1);
  CHECK(whole.ranges[0].at(metric::kDramRead) > 0.5 * 40 * kElements * 4);
  CHECK(whole.ranges[0].at(metric::kDramRead) < 1.5 * 40 * kElements * 4);
  // Without a hint: per launch first, then the whole call where CUPTI gave as many ranges as it
  // gives per kernel (it drops the rest unreported).
  const RangeProfileResult unhinted = profiler.profile(forty, nullptr);
  REQUIRE_MESSAGE(unhinted.available, unhinted.reason);
  CHECK((unhinted.scope == "call" ? unhinted.ranges.size() == 1 : unhinted.ranges.size() == 40));
  // Back to one range per launch (a new session: one configured for either mode refuses the other).
  const RangeProfileResult back = profiler.profile(twenty, nullptr, 20);
  REQUIRE_MESSAGE(back.available, back.reason);
  CHECK(back.scope == "kernel");
  CHECK(back.ranges.size() == 20);
  kept.reset();  // one range profiler session per context
  RangeProfilerOptions per_launch = opts;
  per_launch.per_kernel_launches = 0;
  const RangeProfileResult forty_per_launch = profile_ranges(forty, nullptr, per_launch, 40);
  REQUIRE_MESSAGE(forty_per_launch.available, forty_per_launch.reason);
  CHECK(forty_per_launch.ranges.size() <= 40);
  std::printf("range profiler: 40 launches: whole call %.1f ms (call step %.1f ms), unhinted %s %.1f ms; "
              "20 launches per kernel %.1f ms (call step %.1f ms); per launch, %zu of 40 launches got counters\n",
              1e3 * whole.seconds, 1e3 * whole.step_seconds.at("call"), unhinted.scope.c_str(), 1e3 * unhinted.seconds,
              1e3 * back.seconds, 1e3 * back.step_seconds.at("call"), forty_per_launch.ranges.size());
  std::printf("range profiler: first call %.3f s (host setup), reused %.3f s (room for 256 ranges, %zu KB), "
              "%.3f s (room for 16, %zu KB), one-off %.3f s\n",
              empty.seconds, third.seconds, third.image_bytes / 1024, sized.seconds, sized.image_bytes / 1024,
              profile_ranges([&] { buf.scale_bias(); }, nullptr, opts).seconds);
  // A metric this chip does not know is dropped with the reason, the rest collected.
  opts.metrics.push_back("no_such__metric.sum");
  const RangeProfileResult unknown = profile_ranges([&] { buf.scale_bias(); }, nullptr, opts);
  REQUIRE(unknown.available);
  REQUIRE(unknown.dropped.size() == 1);
  CHECK(unknown.dropped[0].find("no_such__metric.sum (unknown on") == 0);
  // A pass budget the full default set exceeds drops metrics from the end, never the first.
  RangeProfilerOptions wide;
  wide.metrics = default_metrics();
  for (const char* extra : {"l1tex__t_bytes.sum", "lts__t_bytes.sum", "lts__t_sector_hit_rate.pct",
                            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
                            "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
                            "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
                            "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
                            "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
                            "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"})
    wide.metrics.push_back(extra);
  const RangeProfileResult fitted = profile_ranges([&] { buf.scale_bias(); }, nullptr, wide);
  REQUIRE(fitted.available);
  CHECK(fitted.passes <= 2);
  CHECK(fitted.metrics.front() == metric::kDuration);
  CHECK(fitted.metrics.size() + fitted.dropped.size() == wide.metrics.size());
  std::printf("range profiler: %zu requested -> %zu collected in %zu pass(es), dropped %s\n", wide.metrics.size(),
              fitted.metrics.size(), fitted.passes, nlohmann::json(fitted.dropped).dump().c_str());
}

TEST_CASE("range profiler: counters another process holds come back busy, the host setup kept for when they are free") {
  Buffers buf;
  buf.scale_bias();
  KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
  RangeProfilerOptions opts;
  opts.metrics = {metric::kDuration, metric::kDramRead, metric::kDramWrite};
  opts.keep_session = false;  // its setup stays, its session (and the counters) go after each profile
  RangeProfiler profiler(opts);
  const auto call = [&] { buf.scale_bias(); };
  const RangeProfileResult before = profiler.profile(call, nullptr, 1);
  if (!before.available) {
    std::printf("not measured: hardware counters: %s\n", before.reason.c_str());
    return;
  }
  // The other process: a kept session of profiler_probe, for 8 s after it says "holding" (it
  // exits by itself, so it cannot outlive a test that fails here).
  FILE* other = popen((std::string(KAGENT_PROFILER_PROBE) + " --hold-counters 8").c_str(), "r");
  REQUIRE(other != nullptr);
  std::string said;
  char line[512];
  while (std::fgets(line, sizeof line, other)) {
    said = line;
    if (said.rfind("holding", 0) == 0 || said.rfind("probe counters unavailable", 0) == 0) break;
  }
  if (said.rfind("holding", 0) != 0) {
    pclose(other);
    FAIL("the other process could not hold the counters: " << said);
  }
  const RangeProfileResult fresh = RangeProfiler(opts).profile(call, nullptr, 1);  // no setup yet
  const RangeProfileResult held = profiler.profile(call, nullptr, 1);              // its setup built before
  const int other_status = pclose(other);  // waits for the other process to let go
  CHECK(other_status == 0);
  const RangeProfileResult freed = profiler.profile(call, nullptr, 1);
  std::printf("range profiler: counters held by another process: busy in %.3f s with no setup yet (%s), in %.3f s "
              "with one (%s); once free %s in %.3f s, setup step %.3f s (the first setup: %.3f s)\n",
              fresh.seconds, fresh.status.c_str(), held.seconds, held.status.c_str(), freed.status.c_str(),
              freed.seconds, freed.step_seconds.count("setup") ? freed.step_seconds.at("setup") : -1.0,
              before.step_seconds.at("setup"));
  CHECK_MESSAGE(fresh.status == "busy", fresh.reason);
  CHECK_MESSAGE(held.status == "busy", held.reason);
  CHECK(held.reason.find("another process holds") == 0);
  REQUIRE_MESSAGE(freed.available, freed.reason);
  REQUIRE(freed.ranges.size() == 1);
  CHECK(freed.ranges[0].at(metric::kDramRead) > 0.5 * kElements * 4);
  // Busy left the host side (initialisation, chip, host object, config image) as it was: the
  // profile after it did not build it again.
  CHECK(freed.step_seconds.at("setup") < 0.1 * before.step_seconds.at("setup"));
}
