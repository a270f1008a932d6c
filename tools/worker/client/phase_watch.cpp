#include "worker/client/phase_watch.h"

#include <fmt/format.h>

namespace kagent {

namespace {
std::chrono::duration<double> as_seconds(double s) { return std::chrono::duration<double>(s); }
}  // namespace

std::string describe(const PhaseOverrun& o) {
  const std::string budget = fmt::format("{:g}", o.budget_s);
  if (o.gpu)
    return fmt::format("the {} phase held the GPU{} for more than its budget of {} s{} ({} {}={}); killed", o.phase,
                       o.alone ? " alone" : "", budget, o.alone ? "" : " (shared, which every timing of that GPU waits for)",
                       kPhaseGpuBudgetFlag, o.phase, budget);
  return fmt::format("the {} phase ran for more than its budget of {} s, waits for the GPU's timing lock not counted "
                     "({} {}={}); killed",
                     o.phase, budget, kPhaseBudgetFlag, o.phase, budget);
}

void PhaseWatch::settle(clock::time_point now) {
  if (index_ && !waiting_ && now > last_) {
    wall_ += now - last_;
    if (holding()) gpu_ += now - last_;
  }
  last_ = now;
}

bool PhaseWatch::on_phase(std::string_view phase, clock::time_point now) {
  const auto i = phase_index(phase);
  if (!i || (index_ && *i <= *index_)) return false;  // unknown, earlier or again: never a fresh budget
  settle(now);
  index_ = i;
  budget_ = budgets_.of(phase);
  wall_ = gpu_ = clock::duration::zero();
  return true;
}

void PhaseWatch::on_lock(const protocol::LockEvent& e, clock::time_point now) {
  settle(now);
  switch (e.kind) {
    case protocol::LockEvent::Kind::Waiting:
      // A conversion lets go first: the worker holds nothing while it waits.
      waiting_ = true;
      held_ = LockMode::None;
      break;
    case protocol::LockEvent::Kind::Held:
      waiting_ = false;
      held_ = e.mode;
      break;
    case protocol::LockEvent::Kind::Broken:
      // Unlocked from now on: the worker stalls no sibling through the lock.
      waiting_ = false;
      held_ = LockMode::None;
      break;
  }
}

PhaseWatch::clock::duration PhaseWatch::wall(clock::time_point now) const {
  return wall_ + (index_ && !waiting_ && now > last_ ? now - last_ : clock::duration::zero());
}

PhaseWatch::clock::duration PhaseWatch::gpu(clock::time_point now) const {
  return gpu_ + (index_ && !waiting_ && holding() && now > last_ ? now - last_ : clock::duration::zero());
}

double PhaseWatch::wall_seconds(clock::time_point now) const {
  return std::chrono::duration<double>(wall(now)).count();
}

std::optional<PhaseWatch::clock::duration> PhaseWatch::left(clock::time_point now) const {
  if (!index_ || waiting_) return std::nullopt;
  std::optional<clock::duration> left;
  const auto take = [&](clock::duration d) { left = left ? std::min(*left, d) : d; };
  if (budget_.wall_s) take(std::chrono::duration_cast<clock::duration>(as_seconds(*budget_.wall_s)) - wall(now));
  if (budget_.gpu_s && holding()) take(std::chrono::duration_cast<clock::duration>(as_seconds(*budget_.gpu_s)) - gpu(now));
  return left;
}

std::optional<PhaseOverrun> PhaseWatch::overrun(clock::time_point now) const {
  if (!index_) return std::nullopt;
  const double wall_s = std::chrono::duration<double>(wall(now)).count();
  const double gpu_s = std::chrono::duration<double>(gpu(now)).count();
  const std::optional<double> wall_over = budget_.wall_s && wall_s >= *budget_.wall_s
                                              ? std::optional<double>(wall_s - *budget_.wall_s)
                                              : std::nullopt;
  const std::optional<double> gpu_over =
      budget_.gpu_s && gpu_s >= *budget_.gpu_s ? std::optional<double>(gpu_s - *budget_.gpu_s) : std::nullopt;
  // Both past: the GPU clock never runs faster than the wall clock, so the larger overshoot is
  // the budget that ran out first.
  const bool alone = held_ == LockMode::Exclusive;
  if (gpu_over && (!wall_over || *gpu_over >= *wall_over))
    return PhaseOverrun{std::string(this->phase()), true, alone, *budget_.gpu_s, gpu_s, wall_s};
  if (wall_over) return PhaseOverrun{std::string(this->phase()), false, alone, *budget_.wall_s, wall_s, wall_s};
  return std::nullopt;
}

}  // namespace kagent
