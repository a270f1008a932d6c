// profiler_probe: the elementwise and tiled-SGEMM kernels once each from a cold L2, measured
// by kagent's range profiler, one line per kernel and L2 flush:
//   probe kernel=<name> dram_read=<bytes> dram_write=<bytes> duration_ns=<ns> gbps=<GB/s> flush=<read|memset>
// flush=kagent is kagent's L2Flush (a memset of twice the L2, as nvbench flushes; what the
// profile phase and the timer use); flush=read is a read pass over the same size and flush=none
// no flush, both shown for contrast.
// With --no-profile it only runs them (warm-up, then the measured launch), for
// scripts/ncu_check.sh to measure the same launches under Nsight Compute.
// With --hold-counters S it profiles one launch, keeps the range profiler's session (and with
// it the GPU's counters) for S seconds after printing "holding", then exits: another process's
// profiles meanwhile find the counters busy (the profiler's GPU test).
// With --range-cost it measures instead what the range profiler's steps cost per profile, by
// metric set, launches per call and range mode, on small launches like a quick answer's:
//   range-cost set=<name> launches=<n> mode=<kernel|call> total_ms=.. start_ms=.. call_ms=.. stop_ms=.. other_ms=..
#include <cstdio>
#include <charconv>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <vector>
#include <stdexcept>
#include <string>
#include <thread>

#include <cuda_runtime_api.h>

#include "profiler/range_profiler.h"
#include "timer/l2_flush.h"
#include "timer/statistics.h"

#include <ATen/ATen.h>
#include "profiler_kernels.h"

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// A device buffer owned for the probe's lifetime.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { (void)cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* f() const { return static_cast<float*>(p); }
};

size_t l2_bytes() {
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  return static_cast<size_t>(l2 > 0 ? l2 : 1 << 20);
}

// --hold-counters: the counters held by a kept session for `seconds`.
int hold_counters(double seconds) {
  const int64_t n = int64_t{1} << 20;
  DeviceBuffer x(n * 4), y(n * 4);
  check(cudaMemset(x.p, 0, n * 4), "cudaMemset");
  kagent::profiler::RangeProfilerOptions opts;
  opts.metrics = {kagent::profiler::metric::kDuration, kagent::profiler::metric::kDramRead};
  kagent::profiler::RangeProfiler counters(opts);  // keep_session: held until it is destroyed
  const auto r = counters.profile(
      [&] {
        kagent_probe::launch_scale_bias(x.f(), y.f(), n, 2.0f, 1.0f, nullptr);
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      },
      nullptr, 1);
  if (!r.available) {
    std::printf("probe counters unavailable: %s (%s)\n", r.status.c_str(), r.reason.c_str());
    return 3;
  }
  std::printf("holding\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return 0;
}

// --range-cost: the medians of 9 profiles (after one warm-up profile) for each case.
int range_cost() {
  namespace m = kagent::profiler::metric;
  const int64_t n = int64_t{1} << 20;  // 4 MiB: a few microseconds per launch, like a small answer's kernels
  DeviceBuffer x(n * 4), y(n * 4);
  check(cudaMemset(x.p, 0, n * 4), "cudaMemset");
  kagent::L2Flush l2;
  const auto flush = [&] {
    l2.flush(nullptr);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  };
  kagent_probe::launch_scale_bias(x.f(), y.f(), n, 2.0f, 1.0f, nullptr);  // module loading
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::vector<std::string> worker = {m::kDuration, m::kDramRead,    m::kDramWrite, m::kDramPct, m::kWarpsActive,
                                           m::kIssueActive, m::kIpc, m::kL1Hit,
                                           std::string(m::kTensorPct) + "|sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"};
  struct Case {
    std::string set;
    std::vector<std::string> metrics;
    size_t launches;
    bool whole_call;
  };
  std::vector<Case> cases = {{"duration", {m::kDuration}, 6, false},
                             {"dram3", {m::kDuration, m::kDramRead, m::kDramWrite}, 6, false}};
  for (size_t i = 3; i < worker.size(); ++i)
    cases.push_back({"dram3+" + worker[i].substr(0, worker[i].find('.')), {m::kDuration, m::kDramRead, m::kDramWrite, worker[i]}, 6, false});
  for (size_t launches : {1, 6, 12, 24}) cases.push_back({"worker", worker, launches, false});
  for (size_t launches : {6, 24}) cases.push_back({"worker", worker, launches, true});
  cases.push_back({"duration", {m::kDuration}, 24, false});
  for (const auto& c : cases) {
    kagent::profiler::RangeProfilerOptions opts;
    opts.metrics = c.metrics;
    opts.max_passes = 1;
    opts.per_kernel_launches = c.whole_call ? 1 : 0;
    kagent::profiler::RangeProfiler counters(opts);
    const auto call = [&] {
      for (size_t i = 0; i < c.launches; ++i) kagent_probe::launch_scale_bias(x.f(), y.f(), n, 2.0f, 1.0f, nullptr);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    };
    std::map<std::string, std::vector<double>> steps;
    std::vector<double> total;
    size_t ranges = 0, passes = 0;
    for (int rep = 0; rep < 10; ++rep) {
      const auto r = counters.profile(call, flush, c.launches);
      if (!r.available) {
        std::printf("range-cost counters unavailable: %s (%s)\n", r.status.c_str(), r.reason.c_str());
        return 3;
      }
      if (rep == 0) continue;  // the session's first Start
      ranges = r.ranges.size();
      passes = r.passes;
      total.push_back(1e3 * r.seconds);
      for (const auto& [k, v] : r.step_seconds) steps[k].push_back(1e3 * v);
    }
    const auto med = [&](const char* step) { return kagent::stats::median(steps[step]); };
    const double start = med("start"), stop = med("stop"), called = med("call");
    const double t = kagent::stats::median(total);
    std::printf("range-cost set=%s launches=%zu mode=%s ranges=%zu passes=%zu total_ms=%.2f start_ms=%.2f call_ms=%.2f "
                "stop_ms=%.2f other_ms=%.2f\n",
                c.set.c_str(), c.launches, c.whole_call ? "call" : "kernel", ranges, passes, t, start, called, stop,
                t - start - called - stop);
  }
  // The same call with no profiler, for the call step's baseline.
  std::vector<double> plain;
  for (int rep = 0; rep < 10; ++rep) {
    flush();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 24; ++i) kagent_probe::launch_scale_bias(x.f(), y.f(), n, 2.0f, 1.0f, nullptr);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    plain.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("range-cost plain call of 24 launches: %.3f ms\n", kagent::stats::median(plain));
  return 0;
}

// `text` as a whole number or decimal of T's type into `out`; false when it is not one.
template <class T>
bool number_arg(const char* text, T& out) {
  const char* end = text + std::strlen(text);
  const auto [stop, ec] = std::from_chars(text, end, out);
  return ec == std::errc() && stop == end;
}

}  // namespace

int main(int argc, char** argv) {
  bool profile = true;
  bool range_cost_only = false;
  double hold_seconds = 0;
  int64_t elements = int64_t{64} << 20;
  int gemm_n = 2048;
  bool ok = true;
  for (int i = 1; ok && i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--no-profile")) profile = false;
    else if (!std::strcmp(argv[i], "--range-cost")) range_cost_only = true;
    else if (!std::strcmp(argv[i], "--hold-counters") && has_value)
      ok = number_arg(argv[++i], hold_seconds) && hold_seconds > 0;
    else if (!std::strcmp(argv[i], "--elements") && has_value) ok = number_arg(argv[++i], elements) && elements > 0;
    else if (!std::strcmp(argv[i], "--gemm") && has_value) ok = number_arg(argv[++i], gemm_n) && gemm_n > 0;
    else ok = false;
  }
  if (!ok) {
    std::fprintf(stderr,
                 "usage: profiler_probe [--no-profile | --range-cost | --hold-counters S] [--elements N] [--gemm N] "
                 "(S, N: positive numbers)\n");
    return 2;
  }
  try {
    if (range_cost_only) return range_cost();
    if (hold_seconds > 0) return hold_counters(hold_seconds);
    DeviceBuffer x(elements * 4), y(elements * 4);
    const size_t gemm_bytes = static_cast<size_t>(gemm_n) * gemm_n * 4;
    DeviceBuffer a(gemm_bytes), b(gemm_bytes), c(gemm_bytes);
    check(cudaMemset(x.p, 0, elements * 4), "cudaMemset");
    check(cudaMemset(a.p, 0, gemm_bytes), "cudaMemset");
    check(cudaMemset(b.p, 0, gemm_bytes), "cudaMemset");
    kagent::L2Flush l2;
    const auto kagent_flush = [&] {
      l2.flush(nullptr);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    };
    const at::Tensor read_buffer = at::zeros({static_cast<int64_t>(2 * l2_bytes() / 4)}, at::device(at::kCUDA).dtype(at::kInt));
    const auto read_flush = [&] {
      (void)read_buffer.amax();  // one reduction reads every line
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    };
    read_flush();  // warm-up: the reduction's module
    struct Case {
      const char* name;
      std::function<void()> run;
    };
    const Case cases[] = {
        {"empty_kernel", [&] { kagent_probe::launch_empty(nullptr); }},
        {"scale_bias_kernel", [&] { kagent_probe::launch_scale_bias(x.f(), y.f(), elements, 2.0f, 1.0f, nullptr); }},
        {"tiled_sgemm_kernel", [&] { kagent_probe::launch_tiled_sgemm(a.f(), b.f(), c.f(), gemm_n, nullptr); }},
    };
    for (const auto& k : cases) {
      k.run();  // warm-up: module loading
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      if (!profile) {
        kagent_flush();
        k.run();
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        std::printf("probe kernel=%s ran\n", k.name);
        continue;
      }
      kagent::profiler::RangeProfilerOptions opts;
      opts.metrics = {kagent::profiler::metric::kDuration, kagent::profiler::metric::kDramRead,
                      kagent::profiler::metric::kDramWrite};
      kagent::profiler::RangeProfiler counters(opts);
      const auto no_flush = [] {};
      const std::pair<const char*, std::function<void()>> flushes[] = {
          {"none", no_flush}, {"read", read_flush}, {"kagent", kagent_flush}};
      for (const auto& [flush_name, flush] : flushes) {
        const auto r = counters.profile(
            [&] {
              k.run();
              check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            },
            flush);
        if (!r.available) {
          std::printf("probe counters unavailable: %s (%s)\n", r.status.c_str(), r.reason.c_str());
          return 3;
        }
        if (r.ranges.size() != 1) {
          std::printf("probe kernel=%s: %zu ranges, expected 1\n", k.name, r.ranges.size());
          return 1;
        }
        const auto& m = r.ranges[0];
        const double read = m.at(kagent::profiler::metric::kDramRead), write = m.at(kagent::profiler::metric::kDramWrite);
        const double ns = m.at(kagent::profiler::metric::kDuration);
        std::printf("probe kernel=%s dram_read=%.0f dram_write=%.0f duration_ns=%.0f gbps=%.1f flush=%s\n", k.name, read,
                    write, ns, ns > 0 ? (read + write) / ns : 0.0, flush_name);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profiler_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
