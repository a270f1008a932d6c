// ConCuR's selection of supervised data from trajectories, in this order:
//   1. keep correct turns with a speedup over eager at or above `min_speedup`, in finished
//      samples, that no guard rejected or flagged;
//   2. drop near-duplicate kernels (code_fingerprint), keeping the one with the shortest reasoning;
//   3. per task, keep the `per_task` turns with the shortest reasoning;
//   4. balance single-operator (level 1) against fused (levels 2, 3) tasks to `single_per_fused`
//      single rows per fused row, dropping the longest reasoning of the side in excess.
// Reasoning length is counted in characters of the reasoning text (the think block).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataset/run_source.h"

namespace kagent::curate {

struct Criteria {
  double min_speedup = 1.0;
  int per_task = 1;
  std::optional<double> single_per_fused;  // none: no balancing
  bool dedupe = true;
};

void to_json(nlohmann::json& j, const Criteria& c);

struct Selected {
  const dataset::SourceTrajectory* source = nullptr;
  int turn = 0;
  size_t reasoning_chars = 0;
  double speedup = 0;
  bool single_op = false;
  std::string fingerprint;
  const traj::Turn& the_turn() const { return source->trajectory.turns[static_cast<size_t>(turn)]; }
};

// How many turns each step let through or dropped.
struct SelectionCounts {
  int turns = 0, correct_fast = 0, guarded = 0, duplicates = 0, over_task_limit = 0, balance_dropped = 0, selected = 0;
  int single_op = 0, fused = 0;
};
void to_json(nlohmann::json& j, const SelectionCounts& c);

struct Selection {
  std::vector<Selected> rows;   // by task, then shortest reasoning first
  SelectionCounts counts;
  std::string empty_reason;     // when rows is empty: the step that left nothing, in words
};

Selection select(const std::vector<dataset::SourceTrajectory>& runs, const Criteria& criteria);

}  // namespace kagent::curate
