#include "worker/service/profile_phase.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <ATen/ops/zeros.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "profiler/profile_capture.h"
#include "profiler/profile_text.h"
#include "common/switch_value.h"
#include "cuda/cuda_error.h"
#include "worker/python/python_runtime.h"
#include "worker/service/calls.h"
#include "worker/service/cut_text.h"

namespace kagent::worker {

namespace {

profiler::RangeProfilerOptions counter_options() {
  profiler::RangeProfilerOptions o;
  o.keep_session = environment_switch(kProfilerKeepSessionEnv, true);
  // Off: the counters' image always has room for max_ranges launches instead of twice the
  // traced call's (the cost benchmark's comparison, profiler-cost-fixed).
  o.size_to_launches = environment_switch(kProfilerSizeRangesEnv, true);
  // One counter pass by default: the speed-of-light metrics. The second pass (the FP instruction
  // counters behind the roofline's FLOPs) doubled the profile's cost per evaluation (0.03 s to
  // 0.07-0.08 s on an H200, over 20% of a warm evaluation); KAGENT_PROFILER_PASSES=2 brings it back.
  o.max_passes = static_cast<size_t>(environment_number(kProfilerPassesEnv, static_cast<long>(kWorkerCounterPasses)));
  // Above this many launches a call's counters are one range over the whole call (default
  // RangeProfilerOptions::per_kernel_launches; 0: one range per launch always).
  o.per_kernel_launches = static_cast<size_t>(environment_number(kProfilerPerKernelLaunchesEnv, static_cast<long>(o.per_kernel_launches)));
  return o;
}

}  // namespace

ProfilePhase::ProfilePhase() : counters_(counter_options()) {}

void ProfilePhase::flush_l2() {
  if (!flush_) flush_.emplace();
  flush_->flush(nullptr);
  cuda::check(cudaDeviceSynchronize(), "L2 flush before profiling");
}

void ProfilePhase::warm_up() {
  if (warm_) return;
  warm_ = true;
  const auto start = std::chrono::steady_clock::now();
  try {
    at::Tensor t = at::zeros({int64_t{1} << 16}, at::TensorOptions().device(at::kCUDA));
    const auto run_once = [&] {
      t.add_(1);
      cuda::check(cudaDeviceSynchronize(), "profiler warm-up");
    };
    const profiler::ProfileCapture cap = profiler::capture_profile(run_once, [this] { flush_l2(); }, {}, &counters_);
    std::fprintf(stderr, "kagent-worker: profiler warmed up in %.2f s (counters: %s%s%s)\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                 cap.counters.status.c_str(), cap.counters.reason.empty() ? "" : ": ", cap.counters.reason.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kagent-worker: profiler warm-up failed: %s\n", e.what());
  }
}

nlohmann::json ProfilePhase::run(Runner& candidate, ProblemSession& session, PyObject* reference_model,
                                 const CandidateRef& cand, const DeviceInfo& device, int64_t seed, bool& fatal) {
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json p;
  nlohmann::json steps = nlohmann::json::object();
  try {
    Values inputs = session.make_inputs("cuda", seed);
    profiler::ProfileContext ctx;
    ctx.own_kernels = cand.kernels;
    ctx.device = device;
    ctx.io_bytes = tensor_bytes(inputs) + tensor_bytes(session.state_values(reference_model));
    int64_t output_bytes = 0;
    const auto run_once = [&] {
      output_bytes = 0;
      for (const auto& t : call_candidate(candidate, inputs)) output_bytes += static_cast<int64_t>(t.nbytes());
    };
    const auto capture_start = std::chrono::steady_clock::now();
    const profiler::ProfileCapture capture =
        profiler::capture_profile(run_once, [this] { flush_l2(); }, {}, &counters_);
    const auto capture_end = std::chrono::steady_clock::now();
    ctx.io_bytes += output_bytes;
    p = profiler::build_profile(capture, ctx);
    warm_ = true;
    // Where the phase's time goes, beside the counters' own steps (profile.counters.steps).
    const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    steps["inputs"] = secs(start, capture_start);
    steps["trace"] = secs(capture_start, capture_end) - capture.counters.seconds;  // and the device's limits
    steps["counters"] = capture.counters.seconds;
    steps["build"] = secs(capture_end, std::chrono::steady_clock::now());
  } catch (const cuda::ContextLost& e) {
    fatal = true;
    p = {{"error", cut_text(e.what(), 500)}};
  } catch (const std::exception& e) {
    p = {{"error", cut_text(e.what(), 500)}};
  }
  const auto text_at = std::chrono::steady_clock::now();
  p["text"] = profiler::render_profile_text(p);
  const auto end = std::chrono::steady_clock::now();
  if (!steps.empty()) {
    steps["text"] = std::chrono::duration<double>(end - text_at).count();
    p["steps"] = steps;
  }
  p["seconds"] = std::chrono::duration<double>(end - start).count();
  return p;
}

}  // namespace kagent::worker
