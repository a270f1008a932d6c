#include "worker/service/phase_runner.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "cuda/cuda_error.h"
#include "result/isolation.h"
#include "worker/python/python_runtime.h"
#include "worker/service/calls.h"
#include "worker/service/cut_text.h"
#include "worker/service/gpu_memory.h"
#include "worker/protocol/protocol.h"

namespace kagent::worker {

namespace {

std::string first_line(const std::string& s, size_t max = 300) { return s.substr(0, s.find('\n')).substr(0, max); }

}  // namespace

void announce_phase(const Progress& progress, std::string_view phase) {
  if (progress) progress(protocol::phase_line(phase));
}

bool phase_needs_gpu_alone(std::string_view phase) {
  return phase == "timing" || phase == "baselines" || phase == "profile";
}

bool PhaseRunner::charge_lost_context(const char* phase, const std::string& what) {
  // The CUDA generator in graph-capture mode: only a capture the candidate began and never
  // ended puts it there, and kagent's next random draw on the GPU then fails with this text.
  if (candidate_started_ && what.find("Offset increment outside graph capture") != std::string::npos) {
    result_.status = Status::RuntimeError;
    result_.reason = reason::kWorkerState;
    result_.message = fmt::format("the candidate left PyTorch's CUDA generator in graph-capture mode (a capture it "
                                  "began never ended); kagent's own step failed on it in phase {}",
                                  phase);
    result_.runtime_error = cut_text(what);
    record_->failure = kFailureCandidate;
    return true;
  }
  const auto lost = lost_context(what);
  if (!lost) return false;
  context_lost_ = true;
  const bool theirs = candidate_started_;
  result_.status = theirs ? Status::RuntimeError : Status::InternalError;
  result_.reason = theirs ? reason::kCudaFatal : reason::kEvaluatorError;
  result_.message = theirs ? fmt::format("CUDA error after the candidate ran ({}, surfaced in kagent's phase {}); the "
                                         "worker is replaced",
                                         *lost, phase)
                           : fmt::format("kagent's own step failed in phase {}: the CUDA context is lost ({})", phase,
                                         *lost);
  result_.runtime_error = cut_text(what);
  record_->failure = theirs ? kFailureCandidate : kFailureEvaluator;
  return true;
}

bool PhaseRunner::run(const char* name, const std::function<bool()>& body) {
  PhaseRecord rec;
  rec.name = name;
  announce_phase(announce_, name);  // before its wait for the lock: the orchestrator's clocks skip the wait
  const GpuTimingLock::Hold alone(phase_needs_gpu_alone(name) ? lock_ : nullptr, LockMode::Exclusive);
  const auto start = std::chrono::steady_clock::now();
  // Waits for the lock inside the phase (a yield to a sibling's timing, the idle release taking it
  // back) are not its time, as on the orchestrator's clocks. No other thread takes the lock now.
  const double waited_before = lock_ ? lock_->waited_seconds() : 0;
  reset_gpu_peak();
  record_ = &rec;
  bool go_on = false;
  auto fail = [&](Status status, const std::string& reason, const std::string& message, const std::string& detail,
                  const char* whose) {
    result_.status = status;
    result_.reason = reason;
    result_.message = message;
    result_.runtime_error = cut_text(detail);
    rec.failure = whose;
  };
  try {
    go_on = body();
  } catch (const cuda::ContextLost& e) {
    context_lost_ = true;
    fail(Status::RuntimeError, reason::kCudaFatal, "CUDA error in the candidate; the worker is replaced", e.what(),
         kFailureCandidate);
  } catch (const CandidateError& e) {
    fail(Status::RuntimeError, e.reason,
         e.reason == reason::kCandidateOom ? "the candidate ran out of GPU memory: " + first_line(e.what())
                                           : first_line(e.what()),
         e.what(), kFailureCandidate);
  } catch (const EvaluatorError& e) {
    if (!charge_lost_context(name, e.what()))
      fail(Status::InternalError, e.reason, fmt::format("kagent's own step failed in phase {}: {}", name, first_line(e.what())),
         e.what(), kFailureEvaluator);
  } catch (const PythonError& e) {
    if (!charge_lost_context(name, e.message + "\n" + e.traceback))
      fail(Status::InternalError, reason::kEvaluatorError,
         fmt::format("kagent's own step failed in phase {}: {}", name, first_line(e.message)),
         e.message + "\n" + e.traceback, kFailureEvaluator);
  } catch (const std::exception& e) {
    const bool oom = is_out_of_memory(e);
    if (!charge_lost_context(name, e.what()))
      fail(Status::InternalError, oom ? reason::kEvaluatorOom : reason::kEvaluatorError,
         fmt::format("kagent's own step failed in phase {}{}: {}", name, oom ? " (out of GPU memory)" : "",
                     first_line(e.what())),
         e.what(), kFailureEvaluator);
  }
  // A phase that ended the evaluation by a verdict rather than an exception: the verdict says
  // whose it was.
  // (A candidate still Correct that ends it was rejected by the guards under every policy.)
  if (!go_on && rec.failure.empty())
    rec.failure = result_.status == Status::ProblemError  ? kFailureProblem
                  : result_.status == Status::InternalError ? kFailureEvaluator
                                                            : kFailureCandidate;
  const double waited = lock_ ? lock_->waited_seconds() - waited_before : 0;
  rec.seconds = std::max(0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - waited);
  rec.peak_gpu_bytes = gpu_peak_bytes();
  record_ = nullptr;
  result_.phases.push_back(std::move(rec));
  return go_on;
}

}  // namespace kagent::worker
