// The speedup over eager measured again in paired rounds (issue 46). A kernel of a few
// microseconds is timed to within 1% inside one evaluation, yet its speedup moves by 10-15% from
// one evaluation (and worker) to the next: its time depends on where its inputs lie (on an H200,
// torch's own 5-12 us kernels timed on 12 inputs allocated one after the other spread 1.08-1.33,
// on one input 1.01-1.03: bench/timing/placement_probe.py). The rounds time the eager reference
// and the candidate one after the other, several times, each round on inputs of its own, and say
// how well the speedup is known: an interval, which a reward can use (rollout's "speedup_from").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent {

// The speedup is pinned where the interval's ends are within this of each other: issue 46's 1.05.
inline constexpr double kSpeedupResolution = 0.05;

struct SpeedupRounds {
  std::vector<double> ratios;  // per round: eager's median over the candidate's
  double median = 0;           // of the ratios
  // Their geometric mean: what a reward reads. The placements' times form a mixture (allocations
  // one after the other alternate between a fast and a slow kind for some kernels), whose median
  // over a few rounds jumps between the kinds; the mean moves less (the H200 round trip's 19
  // answers under 1 ms, 3 evaluations with rounds each: 90th-percentile spread 1.068 against 1.090).
  double mean = 0;
  double low = 0, high = 0;    // the smallest and the largest ratio: the interval
  // The chance that [low, high] holds the ratios' median, whatever their distribution (each
  // round independently below it with probability 1/2): 1 - 2^(1-n), 0.9375 for 5 rounds.
  double coverage = 0;
  bool resolved = false;       // high <= low * (1 + kSpeedupResolution)
};

// Throws std::invalid_argument for fewer than 2 ratios or one that is not a positive number.
SpeedupRounds summarize_rounds(std::vector<double> ratios);

void to_json(nlohmann::json& j, const SpeedupRounds& r);
void from_json(const nlohmann::json& j, SpeedupRounds& r);

// Which speedup over eager a reward reads: the timing's (eager's median over the candidate's, the
// default), or the rounds' geometric mean or low end where rounds were run (the timing's elsewhere).
enum class SpeedupEstimate { Timing, Rounds, RoundsLow };
std::string to_string(SpeedupEstimate e);  // "timing" | "rounds" | "rounds_low"
std::optional<SpeedupEstimate> speedup_estimate_from_name(std::string_view name);

}  // namespace kagent
