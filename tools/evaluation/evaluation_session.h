// EvaluationSession: the orchestrator's side of evaluating candidates of one problem, in
// steps that `kagent eval` runs once and `kagent solve` runs every turn with long-lived
// workers: open the problem (spec from the cache or the worker), compile (nvcc on the pool's
// compile threads, so several samples compile at once), evaluate (on a free worker of the
// pool). The pool is the session's own, or shared by many sessions (`kagent collect`).
// It never touches CUDA; the workers do.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "evaluation/answer_extensions.h"
#include "evaluation/evaluation_pool.h"
#include "problem/problem_spec.h"
#include "result/device_info.h"
#include "result/eval_result.h"

namespace kagent {

// Why a problem could not be opened: the verdict and the one line to print.
struct OpenError {
  EvalResult result;
  std::string line;
};

class EvaluationSession {
 public:
  // A pool of its own: its workers start with this problem and warm it up.
  explicit EvaluationSession(EvaluationSettings settings);
  // A shared pool (started by its owner): the workers serve other problems too.
  explicit EvaluationSession(std::shared_ptr<EvaluationPool> pool);
  ~EvaluationSession();
  EvaluationSession(const EvaluationSession&) = delete;
  EvaluationSession& operator=(const EvaluationSession&) = delete;

  // Loads the problem's spec. A spec in the on-disk cache returns at once while the workers
  // start and load the problem in the background (so nvcc can start); otherwise a worker
  // derives it. `problem` must be an absolute path to an existing file.
  std::optional<OpenError> open(const std::string& problem);

  const ProblemSpec& spec() const { return spec_; }
  // The GPU's description (the worker's hello) once every worker started, or why one could
  // not start. Waits for the workers.
  std::variant<DeviceInfo, WorkerError> started();
  // The same, an unavailable device when a worker could not start.
  DeviceInfo device();

  // One whole candidate: compile (cuda: nvcc on the pool's compile threads, for the workers'
  // GPU; kernelbench: the answer's load_inline extensions, see answer_extensions.h) and
  // evaluate on a free worker. `path` is the candidate's
  // file. Always returns a result; a problem a native candidate cannot express is Invalid.
  // Thread-safe. `options`: the worker's options for this evaluation alone, instead of the
  // pool's (e.g. the profile off for one call, as the profiler's cost benchmark alternates it).
  // A KernelBench answer's load_inline extensions being built, on one of the pool's compile
  // slots, for the arch the pool guesses (start_build).
  struct Prebuilt {
    std::string path, arch;
    std::future<std::pair<AnswerExtensions, CandidateRef>> result;  // joined by ~future
  };
  // `prebuilt`: start_build's build of this very file, if the caller started one (it is built
  // again where the workers' GPU turns out to differ from the guess).
  EvalResult evaluate_file(const std::string& path, const std::string& format, const std::string& display_name,
                           const std::optional<EvalOptions>& options = std::nullopt,
                           std::optional<Prebuilt> prebuilt = std::nullopt);

  // Starts building a KernelBench answer's extensions now, while the problem opens (`kagent eval`:
  // the worker starts Python, torch and CUDA; serve: a worker loads a problem it has not seen),
  // instead of after it. Needs no open problem, hence the pool: nullopt for a native candidate,
  // whose compile needs the problem's spec.
  static std::optional<Prebuilt> start_build(const std::shared_ptr<EvaluationPool>& pool, const std::string& path,
                                             const std::string& format, const std::string& display_name);
  std::optional<Prebuilt> start_build(const std::string& path, const std::string& format,
                                      const std::string& display_name) const {
    return start_build(pool_, path, format, display_name);
  }

  // The reference's eager and torch.compile times (the worker measures them once per problem,
  // torch version and GPU; cached after, and measured once per process: BaselineMemo). nullopt
  // without a GPU or when the worker fails.
  std::optional<Timing> baselines();

  EvaluationPool& pool() { return *pool_; }

 private:
  std::shared_ptr<EvaluationPool> pool_;
  bool own_pool_ = false;
  std::atomic<bool> startup_reported_{false};  // the first evaluation's record carries the start-up seconds
  // The problem's baseline cache key on the workers' GPU (from the spec's sha256; empty before
  // the problem is opened).
  std::string baseline_key(const DeviceInfo& device) const;

  std::string problem_;
  ProblemSpec spec_;

};

}  // namespace kagent
