// The 4-turn trajectory the reward and return tests compute by hand:
//   turn 0  no code (format error)                      -> no verdict
//   turn 1  compiled, wrong
//   turn 2  correct, speedup 1.2 over eager, own kernels 60% of GPU time
//   turn 3  correct, speedup 4.0, own kernels 90%
#pragma once

#include <optional>

#include "trajectory/trajectory.h"

namespace kagent::rollout::testing {

inline EvalResult verdict(Status s, bool compiled, std::optional<double> speedup = std::nullopt,
                          std::optional<double> coverage = std::nullopt) {
  EvalResult r;
  r.status = s;
  r.format = "cuda";
  CompileInfo c;
  c.ok = compiled;
  r.compile = c;
  if (speedup) {
    Timing t;
    t.speedup_eager = speedup;
    t.speedup_compiled = *speedup / 2;
    r.timing = t;
  }
  if (coverage) r.profile = {{"own_share", *coverage}};
  return r;
}

inline traj::Trajectory four_turns(const std::string& task = "1_relu", int sample = 0) {
  traj::Trajectory t;
  t.problem.name = task;
  t.problem.level = 1;
  t.sample = sample;
  t.max_turns = 4;
  t.status = traj::SampleStatus::Finished;
  for (int i = 0; i < 4; ++i) {
    traj::Turn turn;
    turn.index = i;
    turn.messages = {{"system", "sys"}, {"user", "task " + task}};
    turn.answer = "answer " + std::to_string(i);
    if (i == 0) turn.error = traj::TurnError{traj::turn_error::kFormat, "no code"};
    if (i == 1) turn.eval = verdict(Status::Wrong, true);
    if (i == 2) turn.eval = verdict(Status::Correct, true, 1.2, 0.6);
    if (i == 3) turn.eval = verdict(Status::Correct, true, 4.0, 0.9);
    t.turns.push_back(std::move(turn));
  }
  return t;
}

}  // namespace kagent::rollout::testing
