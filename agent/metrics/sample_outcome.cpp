#include "metrics/sample_outcome.h"

#include <algorithm>

namespace kagent::metrics {

double gpu_seconds_of(const traj::Trajectory& t) {
  double gpu = 0;
  for (const auto& turn : t.turns)
    if (turn.eval) gpu += turn.eval->eval_seconds;
  return gpu;
}

SampleOutcomeRow outcome_row(const std::string& problem, const std::string& level, const traj::Trajectory& t,
                             const std::optional<double>& gpu_seconds, std::optional<Policy> policy) {
  SampleOutcomeRow r;
  r.problem = problem;
  r.level = level;
  for (const auto& turn : t.turns) {
    if (!(policy ? turn.correct_under(*policy) : turn.correct())) continue;
    r.correct = true;
    const int k = turn.index + 1;
    if (auto s = turn.speedup_eager()) {
      r.speedup_eager = std::max(r.speedup_eager.value_or(0.0), *s);
      if (*s > 1.0 && !r.fast1_turn_eager) r.fast1_turn_eager = k;
    }
    if (auto s = turn.speedup_compiled()) {
      r.speedup_compiled = std::max(r.speedup_compiled.value_or(0.0), *s);
      if (*s > 1.0 && !r.fast1_turn_compiled) r.fast1_turn_compiled = k;
    }
  }
  r.tokens = static_cast<double>(t.total_tokens().total());
  r.gpu_seconds = gpu_seconds.value_or(gpu_seconds_of(t));
  return r;
}

}  // namespace kagent::metrics
