// Runs the named phases of an evaluation and records each one (EvalResult::phases): its wall
// time, the peak GPU memory during it, and whose failure ended it. A failure is classified
// here, once, for every phase:
//   CandidateError      the candidate's: runtime_error (reason candidate_oom when it ran out of memory)
//   cuda::ContextLost   the candidate's: runtime_error cuda_fatal; the worker must be replaced
//   EvaluatorError and any other exception
//                       the evaluator's: internal_error, the message naming the phase (and the
//                       memory asked for, when out of memory); never the candidate's fault,
//                       except when it left the CUDA context lost once the candidate had run:
//                       its kernels' fault surfaced in kagent's step (runtime_error cuda_fatal);
//                       or PyTorch's CUDA generator in graph-capture mode, which only a capture
//                       it began and never ended leaves (runtime_error worker_state)
//
// A phase that times (phase_needs_gpu_alone) runs with the GPU's timing lock held exclusively
// (worker/protocol/gpu_timing_lock.h); its wait for the lock is not part of its seconds.
// Each phase is announced as it starts (a phase line, protocol.h) where a PhaseAnnouncer is in
// scope: the orchestrator holds it to its budgets (worker/protocol/phase_budgets.h).
#pragma once

#include <functional>
#include <string_view>

#include "result/eval_result.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/service/worker_timing_lock.h"

namespace kagent::worker {

// Where the phases of the request being served are announced, for its scope: set by the request
// handler, which writes on the reply pipe, and read where the phases run, further down. One at
// a time (a worker serves one request at a time); without one, nothing is announced (tests
// that drive the phases alone).
class PhaseAnnouncer {
 public:
  explicit PhaseAnnouncer(Progress progress);
  ~PhaseAnnouncer();
  PhaseAnnouncer(const PhaseAnnouncer&) = delete;
  PhaseAnnouncer& operator=(const PhaseAnnouncer&) = delete;

  // A phase line for `phase`, through the announcer in scope (if any).
  static void announce(std::string_view phase);

 private:
  Progress progress_;
  PhaseAnnouncer* outer_;
};

// The phases whose numbers a sibling worker's kernels would change: timing, baselines, profile.
bool phase_needs_gpu_alone(std::string_view phase);

class PhaseRunner {
 public:
  // `lock`: the GPU's timing lock (null: none), which the request holds shared.
  explicit PhaseRunner(EvalResult& result, GpuTimingLock* lock = nullptr) : result_(result), lock_(lock) {}

  // Runs `body` as phase `name`. Returns whether the evaluation goes on: false when the body
  // says so (its phase decided the verdict) or when it failed.
  bool run(const char* name, const std::function<bool()>& body);

  // A phase lost the CUDA context: the worker must exit after replying.
  bool context_lost() const { return context_lost_; }
  // From here on the candidate's code has run in this process: a lost context is its doing.
  void candidate_started() { candidate_started_ = true; }

 private:
  // A failure of kagent's own step: the candidate's when the CUDA context is lost after it ran.
  bool charge_lost_context(const char* phase, const std::string& what);

  EvalResult& result_;
  GpuTimingLock* lock_;
  bool context_lost_ = false;
  bool candidate_started_ = false;
  PhaseRecord* record_ = nullptr;  // the phase running now
};

}  // namespace kagent::worker
