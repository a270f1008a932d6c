// One evaluation of a candidate against its problem: a fixed list of named phases, in the
// order nvbench's measure_cold::operator() would read them.
//
//   load                  the reference model, the guards' snapshot, then the candidate: dlopen
//                         a native one, execute a ModelNew file (load_inline builds here)
//   correctness           trials on fresh inputs, the candidate before and after the reference
//   guards_before_timing  the reward-hack guards that need fresh inputs and a traced call
//   timing                measure_cold of the candidate (L2 flushed, CUDA events, stopping rule)
//   guards_after_timing   cached results on the timed inputs, tampering, threads
//   baselines             eager and torch.compile (cache or measured), then the speedup flag
//   profile               CUPTI kernel activity and hardware counters; never changes the verdict
//
// PhaseRunner records each one's time, peak GPU memory and whose failure ended it, and holds the
// GPU's timing lock exclusively for timing, baselines and profile (the request holds it shared
// for the rest, so a sibling worker's loads and checks overlap everything but a timing). A phase
// that decides the verdict (a wrong output, a rejecting guard, a failure) ends the evaluation.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "result/device_info.h"
#include "result/eval_result.h"
#include "worker/guards/guard_pass.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/protocol/protocol.h"
#include "worker/python/python_runtime.h"
#include "worker/service/library_instances.h"
#include "worker/service/problem_session.h"
#include "worker/service/profile_phase.h"
#include "worker/service/runners.h"
#include "worker/service/worker_timing_lock.h"

namespace kagent::worker {

class WorkerState;

// What an evaluation borrows from the worker that runs it.
struct WorkerContext {
  PythonRuntime& py;
  const DeviceInfo& device;
  ProfilePhase& profiler;
  LibraryInstances& libraries;  // a native candidate's shared object, fresh for each evaluation
  GpuTimingLock* lock = nullptr;  // the GPU's timing lock, held shared by the request; null: none
  // The worker's state as the request found it (worker_state.h): put back where the reference
  // fails beside the candidate, to run it alone (reference_check.h). Null: nothing put back.
  WorkerState* state = nullptr;
  Progress announce;  // where each phase is said as it starts (the reply pipe; empty: nowhere)
  // Let go of the shared lock after this long without a CUDA call (idle_lock_release.h); 0: never.
  std::chrono::milliseconds idle_release{0};
};

class Evaluation {
 public:
  Evaluation(WorkerContext ctx, ProblemSession& problem, const protocol::EvaluateRequest& request);

  EvalResult operator()();
  // A phase lost the CUDA context: the worker must be replaced after replying.
  bool context_lost() const { return context_lost_; }
  // Threads born while a step of kagent's that runs no candidate code ran (the baselines'
  // torch.compile): the worker's state check does not count them as the candidate's.
  const std::set<pid_t>& kagent_threads() const { return kagent_threads_; }

 private:
  bool load();
  bool correctness();
  bool guards_before_timing();
  bool code_checks();
  bool timing();
  // Paired rounds of eager and the candidate (EvalOptions::speedup_rounds), under the timing's hold.
  std::optional<SpeedupRounds> speedup_rounds();
  bool guards_after_timing();
  bool baselines();
  bool profile();
  // A phase's body, where a reference that fails beside the loaded candidate and runs alone is
  // the candidate's failure (CandidateError, reference_broken_by_candidate).
  bool blaming_broken_reference(const std::function<bool()>& body);

  WorkerContext ctx_;
  ProblemSession& problem_;
  const protocol::EvaluateRequest& request_;
  const EvalOptions& options_;
  EvalResult result_;
  bool context_lost_ = false;
  bool host_work_released_ = false;  // the current phase lets go of the lock while quiet (HostWorkRelease)
  std::function<void()> between_steps_;  // the current phase's yield between its steps (empty outside one)
  std::set<pid_t> kagent_threads_;

  PyRef reference_model_;
  std::unique_ptr<Runner> reference_;
  std::optional<GuardPass> guards_;
  Values params_;  // native: the parameters forward receives (clones of the reference's)
  std::unique_ptr<Runner> candidate_;
  Values timing_inputs_;
};

}  // namespace kagent::worker
