// metrics.json (collection_metrics.h) as people read it: a text table with a column per level
// (vs eager and vs torch.compile), and CSV with one row per level and baseline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kagent::metrics {

// The table printed at the end of `kagent collect` and by `kagent collect --metrics`.
std::string render_metrics_table(const nlohmann::json& metrics);

// metrics.csv: a header, then one row per (level, baseline): level, baseline, problems,
// samples, correct_rate, fast_<p>..., geomean_speedup, pass@<k>..., fast1@<k>...,
// fast1_turn<t>..., tokens_per_problem, gpu_seconds_per_problem.
std::string metrics_csv(const nlohmann::json& metrics);

}  // namespace kagent::metrics
