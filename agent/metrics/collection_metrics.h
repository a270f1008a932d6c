// The metrics of a collection (docs/collection_format.md, metrics.json) computed from its
// samples: `kagent collect` writes them at the end and with --metrics, `kagent report`
// computes them for a collection that has no metrics.json yet (in progress, or older).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/sample_outcome.h"

namespace kagent::metrics {

// The p values of fast_p, as metrics.json keys them.
inline const std::vector<std::string> kFastP = {"0", "0.5", "0.8", "1.0", "1.5", "2.0"};

// {"generated_at", "computed_by", "samples_per_problem", "turns", "groups": [{"level": "1".."3"|"all", ...}]}.
// fast_p, geomean and correct_rate count samples; pass@k and fast1@k average the unbiased
// estimator 1 - C(n-c, k) / C(n, k) over problems; a problem that could not run counts as
// `samples_per_problem` incorrect samples (pass `problem_errors` with their levels).
// `computed_by` says which command computed them.
nlohmann::json compute_metrics(const std::vector<SampleOutcomeRow>& rows,
                               const std::vector<std::string>& problem_error_levels, int samples_per_problem,
                               int turns, const std::string& computed_by);

// Samples counted under each policy (result/policy.h), by policy name.
using RowsByPolicy = std::map<std::string, std::vector<SampleOutcomeRow>>;

// The metrics under `policy` (compute_metrics of its rows) with "policy" set and every
// policy's groups under "policies": what metrics.json holds, for collect and report alike.
nlohmann::json compute_policy_metrics(const RowsByPolicy& rows, const std::string& policy,
                                      const std::vector<std::string>& problem_error_levels, int samples_per_problem,
                                      int turns, const std::string& computed_by);

// The policy a collection's verdicts were given under, from its manifest's config: its
// --policy; kernelbench, the default; strict for a collection made before policies (its eval
// flags have no tolerance preset either), which the own-kernel rules judged.
std::string collection_policy(const nlohmann::json& config);

// The unbiased pass@k estimator for n samples of which c passed.
double pass_at_k(int n, int c, int k);

}  // namespace kagent::metrics
