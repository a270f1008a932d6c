// Eager and torch.compile baseline times, measured like the candidate and cached per
// (problem file hash, torch version, GPU, timing settings) on disk. The worker only reads
// that cache; the orchestrator writes it from the evaluate reply (client/baseline_cache.h).
#pragma once

#include <optional>
#include <string>

#include "result/eval_result.h"
#include "worker/evaluator.h"
#include "worker/problem_session.h"

namespace kagent::worker {

struct Baselines {
  std::optional<TimingStats> eager, compiled;
  std::string compiled_error;  // why there is no compiled baseline
  bool cache_hit = false;
};

// `device` is the worker's device description (its name and torch version enter the key).
Baselines get_baselines(PythonRuntime& py, ProblemSession& problem, const EvalOptions& opts,
                        const nlohmann::json& device);

}  // namespace kagent::worker
