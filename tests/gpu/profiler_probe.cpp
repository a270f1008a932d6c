// profiler_probe: the elementwise and tiled-SGEMM kernels once each from a cold L2, measured
// by kagent's range profiler, one line per kernel and L2 flush:
//   probe kernel=<name> dram_read=<bytes> dram_write=<bytes> duration_ns=<ns> gbps=<GB/s> flush=<read|memset>
// flush=kagent is kagent's L2Flush (a memset of twice the L2, as nvbench flushes; what the
// profile phase and the timer use); flush=read is a read pass over the same size and flush=none
// no flush, both shown for contrast.
// With --no-profile it only runs them (warm-up, then the measured launch), for
// scripts/ncu_check.sh to measure the same launches under Nsight Compute.
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "profiler/range_profiler.h"
#include "timer/l2_flush.h"

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

}  // namespace

int main(int argc, char** argv) {
  bool profile = true;
  int64_t elements = int64_t{64} << 20;
  int gemm_n = 2048;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-profile")) profile = false;
    else if (!std::strcmp(argv[i], "--elements") && i + 1 < argc) elements = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--gemm") && i + 1 < argc) gemm_n = std::stoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: profiler_probe [--no-profile] [--elements N] [--gemm N]\n");
      return 2;
    }
  }
  try {
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
