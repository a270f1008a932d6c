// The evaluation method of DESIGN.md: correctness trials, then timing, for one candidate
// runner against the reference, in one process, under one timer.
#pragma once

#include <string>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "checker/tolerance.h"
#include "result/eval_result.h"
#include "timer/cold_measurement.h"
#include "worker/guard_options.h"
#include "worker/problem_session.h"
#include "worker/runners.h"

namespace kagent::worker {

struct EvalOptions {
  int trials = 5;               // fresh-seed correctness trials (at least 5 by design; fewer only on request)
  int64_t seed = 42;            // weights; trial t draws inputs from seed + 1 + t
  ToleranceConfig tolerance;
  bool measure = true;          // time the candidate when it is correct
  bool eager_baseline = true;
  bool compiled_baseline = true;
  MeasureConfig timing;
  std::string cache_dir;        // baselines are cached under cache_dir/baselines
  GuardOptions guards;          // reward-hack guards (options "guards")
  bool profile = true;          // CUPTI profile phase after timing a correct candidate (options "profile")
};

EvalOptions eval_options_from_json(const nlohmann::json& j);

// A CUDA error that left the context unusable: the worker must be replaced after replying.
struct CudaFatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `candidate`; CUDA errors (also asynchronous ones) surface here as exceptions.
// A sticky error becomes CudaFatalError.
std::vector<at::Tensor> run_checked(Runner& runner, const Values& inputs);
// The same without the device-wide synchronisation after forward (the side-stream guard
// looks at the moment forward returns); errors raised by forward itself are mapped alike.
std::vector<at::Tensor> run_unsynchronized(Runner& runner, const Values& inputs);
// A failed CUDA call of kagent's own: CudaFatalError when the context is lost, else runtime_error.
void check_cuda(cudaError_t err, const char* what);

// Fills result.correctness and, when wrong, status/reason/message.
void check_correctness(ProblemSession& problem, Runner& candidate, Runner& reference, const EvalOptions& opts,
                       EvalResult& result);

}  // namespace kagent::worker
