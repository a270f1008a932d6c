// Eager and torch.compile baseline times, measured like the candidate and cached per
// (problem file hash, torch version, GPU, timing settings) on disk. The worker only reads
// that cache; the orchestrator writes it from the reply (worker/protocol/baseline_cache.h).
#pragma once

#include <optional>
#include <string>

#include "result/device_info.h"
#include "result/eval_result.h"
#include "worker/protocol/eval_options.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/python/python_runtime.h"
#include "worker/service/problem_session.h"

namespace kagent::worker {

struct Baselines {
  std::optional<TimingStats> eager, compiled;
  std::string compiled_error;  // why there is no compiled baseline
  bool cache_hit = false;
  std::optional<BaselineRecheck> recheck;  // a cached eager time checked against a fresh look
};

// `model`: the reference model to time (an evaluation's own; its weights come from the same
// seed), or null to make one: a second copy of a model's weights costs memory on large problems.
// `lock`: the GPU's timing lock (null: none), held exclusively for each measurement and let go
// while torch.compile compiles (CPU minutes, which siblings' timings need not wait for).
// `trusted_eager_ms`: the eager time the orchestrator measured in this run (EvaluateRequest's);
// a cached entry with it is taken as checked.
Baselines get_baselines(PythonRuntime& py, ProblemSession& problem, const EvalOptions& opts, const DeviceInfo& device,
                        PyObject* model = nullptr, GpuTimingLock* lock = nullptr,
                        std::optional<double> trusted_eager_ms = std::nullopt);

}  // namespace kagent::worker
