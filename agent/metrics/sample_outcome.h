// One sample of one problem as the collection metrics count it: whether some turn is correct,
// the best correct turn's speedups, the first turn that was correct and faster than each
// baseline, and its cost. Built from a finished trajectory.
#pragma once

#include <optional>
#include <string>

#include "trajectory/trajectory.h"

namespace kagent::metrics {

struct SampleOutcomeRow {
  std::string problem;
  std::string level;                             // "1", "2", "3" or "" when unknown
  bool correct = false;                          // some turn is correct
  std::optional<double> speedup_eager;           // of the best correct turn, when timed
  std::optional<double> speedup_compiled;
  std::optional<int> fast1_turn_eager;           // first turn (1-based) correct and faster than eager
  std::optional<int> fast1_turn_compiled;
  double tokens = 0;
  double gpu_seconds = 0;
};

// `gpu_seconds`: the worker time the collection's index recorded for the sample; absent: the
// sum of its turns' evaluation times. `policy`: whose verdict counts a turn correct; absent:
// the verdict the turn was given (its record's status).
SampleOutcomeRow outcome_row(const std::string& problem, const std::string& level, const traj::Trajectory& t,
                             const std::optional<double>& gpu_seconds = std::nullopt,
                             std::optional<Policy> policy = std::nullopt);

// The worker time of a trajectory's evaluations (compile excluded).
double gpu_seconds_of(const traj::Trajectory& t);

}  // namespace kagent::metrics
