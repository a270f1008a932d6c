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
// Each phase is announced as it starts (a phase line, protocol.h) through the request's
// `announce`: the orchestrator holds it to its budgets (worker/protocol/phase_budgets.h).
#pragma once

#include <functional>
#include <string_view>

#include "result/eval_result.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/service/worker_timing_lock.h"

namespace kagent::worker {

// A phase line for `phase` through `progress` (nothing where it is empty: tests that drive the
// phases alone).
void announce_phase(const Progress& progress, std::string_view phase);

// The phases whose numbers a sibling worker's kernels would change: timing, baselines, profile.
bool phase_needs_gpu_alone(std::string_view phase);

class PhaseRunner {
 public:
  // `lock`: the GPU's timing lock (null: none), which the request holds shared; `announce`: where
  // each phase is said as it starts (the reply pipe; empty: nowhere).
  explicit PhaseRunner(EvalResult& result, GpuTimingLock* lock = nullptr, Progress announce = {})
      : result_(result), lock_(lock), announce_(std::move(announce)) {}

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
  Progress announce_;
  bool context_lost_ = false;
  bool candidate_started_ = false;
  PhaseRecord* record_ = nullptr;  // the phase running now
};

}  // namespace kagent::worker
