// The timer (and the checker on device tensors) on a real GPU. Without one the suite is
// skipped, saying why (gpu_test_main.cpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "checker/compare.h"
#include "timer/cold_measurement.h"
#include "cuda/cuda_error.h"
#include "timer/cuda_event.h"
#include "timer/l2_flush.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's


namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print(const char* what, const kagent::TimingStats& t) {
  std::printf("%-28s median %.4f ms  mean %.4f  stdev %.4f  rel %.2f%%  min %.4f  max %.4f  host %.4f ms  n=%d  "
              "gpu %.3f s  [%s]\n",
              what, t.median_ms, t.mean_ms, t.stdev_ms, 100 * t.rel_stdev, t.min_ms, t.max_ms, t.host_median_ms,
              t.iterations, t.total_s, t.stop_reason.c_str());
}

// A blocking (legacy-synchronising) stream owned by the test.
struct BlockingStream {
  cudaStream_t s = nullptr;
  BlockingStream() { KAGENT_CUDA_CHECK(cudaStreamCreate(&s)); }
  ~BlockingStream() { (void)cudaStreamDestroy(s); }
  BlockingStream(const BlockingStream&) = delete;
  BlockingStream& operator=(const BlockingStream&) = delete;
};

constexpr int64_t k64M = int64_t{64} << 20;

}  // namespace

TEST_CASE("relu on 64M floats: plausible, stable, host time >= event time, fast to measure") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto run = [&] { (void)at::relu(x); };
  const auto t0 = std::chrono::steady_clock::now();
  const kagent::TimingStats t = kagent::measure_cold(run);
  const double wall = seconds_since(t0);
  print("relu 64M", t);
  std::printf("one measurement took %.3f s wall\n", wall);
  // 256 MiB read + 256 MiB written: ~0.11 ms at H200 bandwidth, ~0.6 ms on a slow card.
  CHECK(t.median_ms > 0.02);
  CHECK(t.median_ms < 5.0);
  CHECK(t.min_ms <= t.median_ms);
  CHECK(t.median_ms <= t.max_ms);
  CHECK(t.rel_stdev < 0.05);
  CHECK(t.iterations >= kagent::MeasureConfig{}.min_samples);
  CHECK_FALSE(t.stop_reason.empty());
  CHECK(t.host_median_ms >= t.median_ms);
  CHECK(t.total_s > 0);
  CHECK(wall < 1.5);  // warm-up + loop, bounded by max_time_s
}

TEST_CASE("five repeated measurements agree within 2%") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto run = [&] { (void)at::relu(x); };
  kagent::L2Flush flush;  // reused across measurements
  std::vector<double> medians;
  for (int i = 0; i < 5; ++i) {
    const kagent::TimingStats t = kagent::measure_cold(run, {}, &flush);
    print("relu 64M (repeat)", t);
    medians.push_back(t.median_ms);
  }
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  std::printf("spread of medians: %.2f%%\n", 100 * (*hi / *lo - 1));
  CHECK(*hi / *lo - 1 < 0.02);
}

TEST_CASE("a level-1 sized matmul: median stable, measurement well under a second") {
  const auto a = at::randn({2048, 2048}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto b = at::randn({2048, 2048}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto run = [&] { (void)at::matmul(a, b); };
  std::vector<double> medians;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const kagent::TimingStats t = kagent::measure_cold(run);
    print("matmul 2048^3 fp32", t);
    CHECK(seconds_since(t0) < 1.5);
    medians.push_back(t.median_ms);
  }
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  CHECK(*hi / *lo - 1 < 0.02);
}

TEST_CASE("work on another blocking stream is inside the event time") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  const kagent::TimingStats base = kagent::measure_cold([&] { (void)at::relu(x); });
  BlockingStream side;
  const auto side_stream = c10::cuda::getStreamFromExternal(side.s, x.device().index());
  const kagent::TimingStats t = kagent::measure_cold([&] {
    c10::cuda::CUDAStreamGuard g(side_stream);
    for (int i = 0; i < 4; ++i) (void)at::relu(x);
  });
  print("relu (baseline)", base);
  print("4x relu on blocking stream", t);
  CHECK(t.median_ms > 3 * base.median_ms);
}

TEST_CASE("work hidden on a non-blocking stream shows in host time only") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto hidden = c10::cuda::getStreamFromPool();  // pool streams are non-blocking
  const kagent::TimingStats t = kagent::measure_cold([&] {
    const auto y = at::relu(x);  // something on the current stream
    c10::cuda::CUDAStreamGuard g(hidden);
    for (int i = 0; i < 8; ++i) (void)at::relu(x);
  });
  print("8x relu hidden on side stream", t);
  // The events see little; the device-wide host time sees all of it.
  CHECK(t.host_median_ms > 3 * t.median_ms);
}

TEST_CASE("a non-blocking current stream is timed in full (joined to the legacy stream)") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  const kagent::TimingStats base = kagent::measure_cold([&] { (void)at::relu(x); });
  const c10::cuda::CUDAStreamGuard g(c10::cuda::getStreamFromPool());  // the measurement runs on it
  const kagent::TimingStats t = kagent::measure_cold([&] {
    for (int i = 0; i < 4; ++i) (void)at::relu(x);
  });
  print("4x relu, current = pool", t);
  CHECK(t.median_ms > 3 * base.median_ms);
  CHECK(t.host_median_ms >= t.median_ms);
}

TEST_CASE("the L2 flush makes a cache-resident op slower, not faster") {
  const auto x = at::randn({int64_t{2} << 20}, at::device(at::kCUDA).dtype(at::kFloat));  // 8 MiB in, 8 out
  const auto run = [&] { (void)at::relu(x); };
  kagent::MeasureConfig hot;
  hot.flush_l2 = false;
  const kagent::TimingStats cold = kagent::measure_cold(run);
  const kagent::TimingStats warm = kagent::measure_cold(run, hot);
  print("relu 2M flushed", cold);
  print("relu 2M not flushed", warm);
  CHECK(cold.median_ms >= 0.95 * warm.median_ms);
}

TEST_CASE("L2Flush sizes itself from the device") {
  int dev = 0, l2 = 0;
  KAGENT_CUDA_CHECK(cudaGetDevice(&dev));
  KAGENT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  kagent::L2Flush f;
  std::printf("L2 %d bytes, flush buffer %zu bytes\n", l2, f.bytes());
  CHECK(f.bytes() == 2 * static_cast<size_t>(l2));
  CHECK(f.device() == dev);
  kagent::L2Flush moved = std::move(f);
  CHECK(moved.bytes() == 2 * static_cast<size_t>(l2));
  CHECK(f.bytes() == 0);
  moved.flush(c10::cuda::getCurrentCUDAStream().stream());
  KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_CASE("CUDA errors throw with file:line; exceptions from the runner propagate") {
  try {
    KAGENT_CUDA_CHECK(cudaSetDevice(9999));
    FAIL("no throw");
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    MESSAGE(m);
    CHECK(m.find("timer_gpu_test.cpp:") != std::string::npos);
    CHECK(m.find("cudaSetDevice(9999)") != std::string::npos);
    CHECK(m.find("invalid device ordinal") != std::string::npos);
  }
  kagent::CudaEvent a, b;
  CHECK_THROWS_AS(b.elapsed_ms_since(a), std::runtime_error);  // never recorded

  int calls = 0;
  CHECK_THROWS_WITH(kagent::measure_cold([&] {
    if (++calls == 5) throw std::runtime_error("candidate failed");
  }),
                    "candidate failed");
  // The timer still works afterwards.
  const auto x = at::randn({1 << 20}, at::device(at::kCUDA).dtype(at::kFloat));
  CHECK(kagent::measure_cold([&] { (void)at::relu(x); }).median_ms > 0);
}

TEST_CASE("checker on device tensors") {
  const auto e = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  auto g = e.clone();
  CHECK(kagent::compare_output(g, e, 0, {}).ok);
  g.index_put_({12345}, e.index({12345}) + 3.0);
  g.index_put_({777}, std::numeric_limits<float>::quiet_NaN());
  const auto t0 = std::chrono::steady_clock::now();
  const kagent::OutputCheck r = kagent::compare_output(g, e, 0, {});
  std::printf("compare of 64M floats on the GPU: %.3f s; %s\n", seconds_since(t0), r.message.c_str());
  CHECK(r.reason == "non_finite");
  CHECK(r.mismatched == 2);
  CHECK(r.worst_index == std::vector<int64_t>{777});
  REQUIRE(r.samples.size() == 2);
  CHECK(r.samples[1].index == std::vector<int64_t>{12345});
  CHECK(r.max_abs_error == doctest::Approx(3.0).epsilon(1e-5));
  // CPU candidate output against a GPU reference: compared on the reference's device.
  const auto small = at::randn({64, 64}, at::device(at::kCUDA).dtype(at::kHalf));
  CHECK(kagent::compare_output(small.cpu(), small, 0, {}).ok);
}

namespace {

// Busy host work of `us` microseconds inside a timed call, as a Python forward's own overhead.
void spin_host_us(double us) {
  const auto t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) * 1e6 < us) {
  }
}

}  // namespace

TEST_CASE("the launch hold: the host's pace of issuing a call is not in a gpu sample; steady counts its length") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto run = [&] {
    spin_host_us(40);  // the GPU idles meanwhile, unless the stream is held
    (void)at::relu(x);
  };
  kagent::MeasureConfig gpu, steady;
  gpu.sample = kagent::TimingSample::Gpu;
  steady.sample = kagent::TimingSample::Steady;
  const kagent::TimingStats included = kagent::measure_cold(run);  // the default: Launch
  const kagent::TimingStats hidden = kagent::measure_cold(run, gpu);
  const kagent::TimingStats plain = kagent::measure_cold([&] { (void)at::relu(x); }, gpu);
  print("relu after 40 us host, gpu", hidden);
  print("relu after 40 us host, launch", included);
  print("relu alone, gpu", plain);
  std::printf("issue: gpu %.4f ms, launch %.4f ms\n", hidden.issue_median_ms, included.issue_median_ms);
  CHECK(hidden.launch_latency == "hidden");
  CHECK(included.launch_latency == "included");
  CHECK(hidden.issue_median_ms >= 0.04);
  // The 40 us are in the sample without the hold, and not with it: the GPU's time is relu's.
  CHECK(included.median_ms - hidden.median_ms > 0.025);
  CHECK(hidden.median_ms < plain.median_ms * 1.10 + 0.005);

  // Host work longer than the GPU's: a steady sample is the issue time, a gpu sample is not.
  const auto small = at::randn({1024}, at::device(at::kCUDA).dtype(at::kFloat));
  const auto host_bound = [&] {
    spin_host_us(300);
    (void)at::relu(small);
  };
  const kagent::TimingStats as_steady = kagent::measure_cold(host_bound, steady);
  const kagent::TimingStats as_gpu = kagent::measure_cold(host_bound, gpu);
  print("300 us host, tiny relu, steady", as_steady);
  print("300 us host, tiny relu, gpu", as_gpu);
  CHECK(as_steady.launch_latency == "hidden");
  CHECK(as_steady.median_ms >= 0.3);
  CHECK(as_gpu.median_ms < 0.1);
  CHECK(as_gpu.issue_median_ms >= 0.3);
}

TEST_CASE("a call that waits for its own stream outlasts the hold: timed with the latency in, no hang") {
  const auto x = at::randn({k64M}, at::device(at::kCUDA).dtype(at::kFloat));
  kagent::MeasureConfig gpu;
  gpu.sample = kagent::TimingSample::Gpu;
  const auto t0 = std::chrono::steady_clock::now();
  const kagent::TimingStats t = kagent::measure_cold([&] {
    (void)at::relu(x);
    KAGENT_CUDA_CHECK(cudaStreamSynchronize(c10::cuda::getCurrentCUDAStream().stream()));
    (void)at::relu(x);
  }, gpu);
  const double wall = seconds_since(t0);
  print("relu, sync, relu", t);
  std::printf("launch latency: %s; one measurement took %.3f s wall\n", t.launch_latency.c_str(), wall);
  CHECK(t.launch_latency.rfind("included", 0) == 0);
  CHECK(t.median_ms < 5.0);  // no 20 ms watchdog wait in the samples
  CHECK(wall < 2.0);
}
