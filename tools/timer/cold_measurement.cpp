#include "timer/cold_measurement.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <c10/cuda/CUDAStream.h>

#include "common/elapsed.h"
#include "cuda/cuda_error.h"
#include "timer/cuda_event.h"
#include "timer/launch_hold.h"
#include "timer/statistics.h"
#include "timer/thread_switches.h"

namespace kagent {

namespace {

using Clock = std::chrono::steady_clock;

struct Iteration {
  double sample_ms;  // what the statistics see
  double host_ms;
  double issue_ms;
};

// Everything one iteration needs, created once per measurement.
class ColdIteration {
 public:
  ColdIteration(const std::function<void()>& run, L2Flush* flush, TimingSample sample)
      : run_(run), flush_(flush), stream_(c10::cuda::getCurrentCUDAStream().stream()),
        with_issue_(sample == TimingSample::Steady) {
    if (sample != TimingSample::Launch) {
      hold_ = LaunchHold::make(LaunchHold::kDefaultTimeout, launch_latency_);
      if (hold_) launch_latency_ = "hidden";
      else launch_latency_ = "included (" + launch_latency_ + ")";
    } else {
      launch_latency_ = "included";
    }
  }

  Iteration operator()() {
    if (flush_) flush_->flush(stream_);
    KAGENT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (hold_) hold_->hold(stream_);
    const auto t0 = Clock::now();
    start_.record(stream_);
    run_();
    if (stream_ != nullptr && stream_ != cudaStreamLegacy) {
      // A non-default current stream may be non-blocking: make the legacy stream wait for it.
      join_.record(stream_);
      KAGENT_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamLegacy, join_.get(), 0));
    }
    end_.record(cudaStreamLegacy);
    const double issue_ms = seconds_since(t0) * 1e3;
    const bool held = hold_ ? hold_->release() : false;
    end_.synchronize();
    KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
    const double host_ms = seconds_since(t0) * 1e3;
    const double event_ms = end_.elapsed_ms_since(start_);
    // The watchdog let the stream go: this sample has the launch latency in, as will the rest (a
    // call that waits for its own stream would cost the timeout at every later sample).
    // A first call in warm-up is forgiven once (lazy loading, a handle made, a first compile).
    if (hold_ && !held && (!warming_ || std::exchange(forgiven_, true))) {
      hold_.reset();
      let_go_after_ = samples_;
    }
    if (!warming_) ++samples_;
    // Held, the call's kernels ran back to back: the GPU's time (Steady: unless issuing them took longer).
    return {held && with_issue_ ? std::max(event_ms, issue_ms) : event_ms, host_ms, issue_ms};
  }

  void warmed_up() { warming_ = false; }
  // TimingStats::launch_latency, once the loop is done.
  std::string launch_latency() const {
    if (let_go_after_ < 0) return launch_latency_;
    if (let_go_after_ == 0) return "included (the call outlasted the launch hold: it waits for the GPU)";
    return "included after " + std::to_string(let_go_after_) + " samples (the call then outlasted the launch hold)";
  }

 private:
  const std::function<void()>& run_;
  L2Flush* flush_;
  cudaStream_t stream_;
  bool with_issue_;
  std::unique_ptr<LaunchHold> hold_;
  std::string launch_latency_;
  bool warming_ = true;
  bool forgiven_ = false;  // a first outlasting in warm-up was let pass
  int64_t samples_ = 0;    // taken since warm-up
  int64_t let_go_after_ = -1;  // samples taken before the hold was let go (-1: never)
  CudaEvent start_, end_;
  CudaEvent join_{cudaEventDisableTiming};
};

}  // namespace

std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureConfig& cfg) {
  std::vector<std::unique_ptr<StoppingCriterion>> c;
  const NoiseParams noise{cfg.min_samples, cfg.min_time_s, cfg.max_noise};
  c.push_back(std::make_unique<StdRelCriterion>(noise));
  c.push_back(std::make_unique<IqrNoiseCriterion>(noise));
  c.push_back(std::make_unique<MedianPrecisionCriterion>(noise));
  c.push_back(std::make_unique<CapCriterion>(CapParams{cfg.max_iterations, cfg.max_time_s}));
  return std::make_unique<AnyOf>(std::move(c));
}

TimingStats measure_cold(const std::function<void()>& run, const MeasureConfig& cfg, L2Flush* flush) {
  const auto criterion = make_stopping_criterion(cfg);
  return measure_cold(run, cfg, *criterion, flush);
}

TimingStats measure_cold(const std::function<void()>& run, const MeasureConfig& cfg, StoppingCriterion& criterion,
                         L2Flush* flush) {
  std::optional<L2Flush> owned;
  if (!cfg.flush_l2) {
    flush = nullptr;
  } else if (!flush) {
    flush = &owned.emplace();
  } else {
    int device = 0;
    KAGENT_CUDA_CHECK(cudaGetDevice(&device));
    if (flush->device() != device)
      throw std::invalid_argument("measure_cold: the L2Flush belongs to device " + std::to_string(flush->device()) +
                                  ", the current device is " + std::to_string(device));
  }
  ColdIteration iteration(run, flush, cfg.sample);

  // Warm-up: at least warmup_runs and warmup_time_s, but never past max_time_s (a runner
  // that takes seconds is not run warmup_runs times over).
  const auto warm0 = Clock::now();
  for (int runs = 0; runs < cfg.warmup_runs || seconds_since(warm0) < cfg.warmup_time_s; ++runs) {
    if (runs > 0 && seconds_since(warm0) >= cfg.max_time_s) break;
    iteration();
  }

  iteration.warmed_up();
  std::vector<double> event_ms, host_ms, issue_ms;
  const std::optional<int64_t> switches0 = involuntary_switches_of_this_thread();
  const auto loop0 = Clock::now();
  do {  // at least one sample, so the statistics below are defined
    const Iteration it = iteration();
    event_ms.push_back(it.sample_ms);
    host_ms.push_back(it.host_ms);
    issue_ms.push_back(it.issue_ms);
    criterion.add(it.sample_ms * 1e-3, seconds_since(loop0));
  } while (!criterion.is_finished());
  const std::optional<int64_t> switches1 = involuntary_switches_of_this_thread();

  TimingStats t;
  if (switches0 && switches1) t.preemptions = *switches1 - *switches0;
  t.median_ms = stats::median(event_ms);
  t.mean_ms = stats::mean(event_ms);
  t.stdev_ms = stats::stdev(event_ms);
  t.min_ms = stats::min(event_ms);
  t.max_ms = stats::max(event_ms);
  t.rel_stdev = stats::rel_stdev(event_ms);
  t.iterations = static_cast<int>(event_ms.size());
  double sum_ms = 0;
  for (double v : event_ms) sum_ms += v;
  t.total_s = sum_ms * 1e-3;
  t.stop_reason = criterion.reason();
  t.host_median_ms = stats::median(host_ms);
  t.issue_median_ms = stats::median(issue_ms);
  t.launch_latency = iteration.launch_latency();
  return t;
}

}  // namespace kagent
