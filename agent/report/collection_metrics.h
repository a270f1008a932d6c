// The metrics of a collection (docs/collection_format.md, metrics.json) computed from its
// samples, for a collection that has no metrics.json yet (in progress, or written before
// `kagent collect` wrote one). `kagent collect` writes the same fields at the end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent::report {

// One sample of one problem: the unit the metrics count.
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

// The p values of fast_p, as metrics.json keys them.
inline const std::vector<std::string> kFastP = {"0", "0.5", "0.8", "1.0", "1.5", "2.0"};

// {"generated_at", "computed_by", "samples_per_problem", "turns", "groups": [{"level": "1".."3"|"all", ...}]}.
// fast_p, geomean and correct_rate count samples; pass@k and fast1@k average the unbiased
// estimator 1 - C(n-c, k) / C(n, k) over problems; a problem that could not run counts as
// `samples_per_problem` incorrect samples (pass `problem_errors` with their levels).
nlohmann::json compute_metrics(const std::vector<SampleOutcomeRow>& rows,
                               const std::vector<std::string>& problem_error_levels, int samples_per_problem,
                               int turns);

// The unbiased pass@k estimator for n samples of which c passed.
double pass_at_k(int n, int c, int k);

}  // namespace kagent::report
