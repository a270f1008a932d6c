// EvaluationSession: the orchestrator's side of evaluating candidates of one problem, in
// steps that `kagent eval` runs once and `kagent solve` runs every turn with long-lived
// workers: open the problem (spec from the cache or the worker), compile (nvcc, on the
// calling thread, so several samples compile at once), evaluate (on a free worker).
// It never touches CUDA; the workers do.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/native_compiler.h"
#include "problem/problem_spec.h"
#include "result/device_info.h"
#include "result/eval_result.h"
#include "worker/client/worker_client.h"
#include "worker/protocol/eval_options.h"

namespace kagent {

struct EvaluationSettings {
  std::string cache_dir;                  // empty: cache_root()
  std::string arch;                       // nvcc target; empty: the worker GPU's own
  std::vector<int> gpus;                  // one worker each; empty: one worker, default GPU
  double timeout_s = 180;                 // per evaluation (the worker's watchdog)
  bool use_compile_cache = true;
  EvalOptions options;                    // the worker's (trials, seed, tolerances, timing, guards, ...)
};

// Why a problem could not be opened: the verdict and the one line to print.
struct OpenError {
  EvalResult result;
  std::string line;
};

class EvaluationSession {
 public:
  explicit EvaluationSession(EvaluationSettings settings);
  ~EvaluationSession();
  EvaluationSession(const EvaluationSession&) = delete;
  EvaluationSession& operator=(const EvaluationSession&) = delete;

  // Loads the problem's spec. A spec in the on-disk cache returns at once while the workers
  // start and load the problem in the background (so nvcc can start); otherwise the first
  // worker derives it. `problem` must be an absolute path to an existing file.
  std::optional<OpenError> open(const std::string& problem);

  const ProblemSpec& spec() const { return spec_; }
  // The GPU's description (the worker's hello) once every worker started, or why one could
  // not start. Waits for the workers.
  std::variant<DeviceInfo, WorkerError> started();
  // The same, an unavailable device when a worker could not start.
  DeviceInfo device();

  // One whole candidate: compile (cuda: nvcc on the calling thread, for the workers' GPU, so
  // several samples compile at once; kernelbench: the answer's load_inline extensions, the
  // same way, see answer_extensions.h) and evaluate on a free worker. `path` is the candidate's
  // file. Always returns a result; a problem a native candidate cannot express is Invalid.
  // Thread-safe.
  EvalResult evaluate_file(const std::string& path, const std::string& format, const std::string& display_name);

  // The reference's eager and torch.compile times (the worker measures them once per problem,
  // torch version and GPU; cached after). nullopt without a GPU or when the worker fails.
  std::optional<Timing> baselines();

 private:
  struct Worker;
  class Lease;  // a free worker, held for one request (RAII)
  std::string arch_for(const DeviceInfo& device) const;
  std::string current_arch() const;  // the workers' GPU's, or the last one seen while they start
  CompileOptions compile_options(const std::string& display_name, const std::string& arch) const;

  EvaluationSettings settings_;
  std::string cache_;
  std::string problem_;
  ProblemSpec spec_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::filesystem::path device_file_;
  DeviceInfo guessed_device_;             // from the last run, before the workers answer
  std::shared_future<std::optional<WorkerError>> started_;  // hello + prepare of every worker
  mutable std::mutex mu_;
  std::condition_variable free_;
  DeviceInfo device_;
  bool device_known_ = false;
};

}  // namespace kagent
