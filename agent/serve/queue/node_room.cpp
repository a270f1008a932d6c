#include "serve/queue/node_room.h"

#include <algorithm>
#include <cmath>

namespace kagent::serve {

namespace {

// A moving average that follows a change of load within about five jobs.
constexpr double kWeight = 0.2;

void follow(std::optional<double>& average, double value) {
  average = average ? *average + kWeight * (value - *average) : value;
}

}  // namespace

NodeRoom::NodeRoom(size_t workers, size_t compile_slots)
    : workers_(std::max<size_t>(1, workers)), compile_slots_(std::max(compile_slots, workers_)) {}

bool NodeRoom::has_room(size_t held, size_t on_workers) const { return held < on_workers + most_ahead(); }

size_t NodeRoom::most_ahead() const {
  std::lock_guard lock(mu_);
  if (!build_s_ || !eval_s_) return compile_slots_;
  // Answers a second while every worker evaluates, times the seconds a build takes to come: the
  // builds under way on average (Little's law); the answer ready per worker covers the spread.
  const double building = *build_s_ * static_cast<double>(workers_) / *eval_s_;
  return std::clamp(static_cast<size_t>(std::lround(building)) + workers_, workers_, compile_slots_);
}

void NodeRoom::finished(double build_seconds, double eval_seconds) {
  if (!(eval_seconds > 0)) return;
  std::lock_guard lock(mu_);
  follow(build_s_, std::max(0.0, build_seconds));
  follow(eval_s_, eval_seconds);
}

}  // namespace kagent::serve
