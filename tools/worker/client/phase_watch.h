// The per-phase budgets of one evaluate request (worker/protocol/phase_budgets.h), kept by the
// client from the worker's phase and lock lines (protocol.h): a phase's wall clock runs while
// the worker does not wait for the GPU's timing lock, its GPU clock while the worker holds that
// lock, exclusively or shared (a shared hold is let go while the candidate works on the host,
// worker/service/idle_lock_release.h, so it is the candidate's GPU work, and every sibling's
// timing waits for it). Times are passed in, so that the rules are tested without sleeping.
//
// The lines come from the worker's process, which the candidate shares, so a phase line only
// ever makes things stricter: only a phase later in kEvaluatePhases than the current one starts
// (an earlier, repeated or unknown name is ignored, so no phase's budget starts twice), and
// nothing here moves the request's own deadline (the watchdog's).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "worker/protocol/phase_budgets.h"
#include "worker/protocol/protocol.h"

namespace kagent {

// A phase that ran past a budget: which one, and by how much.
struct PhaseOverrun {
  std::string phase;
  bool gpu = false;      // the GPU budget (held the lock); else the wall budget
  bool alone = false;    // the lock held exclusively when it ran out (else shared)
  double budget_s = 0;
  double spent_s = 0;     // on that budget's clock
  double wall_s = 0;      // in the phase, waits not counted (its PhaseRecord's seconds)
};
// "the timing phase held the GPU alone for more than its budget of 20 s (--phase-gpu-budget
// timing=20)": the verdict's message.
std::string describe(const PhaseOverrun& o);

class PhaseWatch {
 public:
  using clock = std::chrono::steady_clock;
  explicit PhaseWatch(PhaseBudgets budgets) : budgets_(std::move(budgets)) {}

  // A phase line: the worker starts `phase`. Returns whether it was taken.
  bool on_phase(std::string_view phase, clock::time_point now);
  // A lock line: waits stop both clocks, a hold (either mode) runs the GPU clock.
  void on_lock(const protocol::LockEvent& e, clock::time_point now);

  // The phase in force ("" before the first phase line).
  std::string_view phase() const { return index_ ? kEvaluatePhases[*index_] : std::string_view(); }
  // Until the current phase's first budget runs out, at the pace of now; nullopt while none
  // can run out (no phase, no budget, a wait, a GPU budget while the lock is not held).
  std::optional<clock::duration> left(clock::time_point now) const;
  // The budget the current phase is past, if any.
  std::optional<PhaseOverrun> overrun(clock::time_point now) const;
  // Seconds of the current phase so far: its wall clock (waits not counted).
  double wall_seconds(clock::time_point now) const;

 private:
  void settle(clock::time_point now);  // what ran since the last event, onto the clocks
  clock::duration wall(clock::time_point now) const;
  bool holding() const { return held_ != LockMode::None; }  // the GPU clock runs
  clock::duration gpu(clock::time_point now) const;

  PhaseBudgets budgets_;
  std::optional<size_t> index_;  // the phase in force: its place in kEvaluatePhases
  PhaseBudget budget_;  // the current phase's
  clock::duration wall_{}, gpu_{};
  bool waiting_ = false;
  LockMode held_ = LockMode::None;  // as the last lock line said
  clock::time_point last_{};
};

}  // namespace kagent
