#include "collect/collection_metrics_file.h"

#include <map>

#include "collect/collection_store.h"
#include "common/files.h"
#include "common/json_optional.h"
#include "common/utf8.h"
#include "metrics/collection_metrics.h"
#include "metrics/metrics_table.h"
#include "trajectory/run_store.h"

namespace kagent::collect {

namespace fs = std::filesystem;
using nlohmann::json;

CollectionOutcomes read_collection_outcomes(const fs::path& dir) {
  const json manifest = read_manifest(dir);
  CollectionOutcomes out;
  const json config = manifest.value("config", json::object());
  out.samples_per_problem = get_or<int>(config, "samples", 1);
  out.turns = get_or<int>(config, "turns", 1);
  out.policy = metrics::collection_policy(config);
  IndexState index = read_index(dir / kIndexFile);
  out.warnings = std::move(index.warnings);

  std::vector<std::pair<std::string, std::string>> problems;  // name, level
  for (const auto& p : manifest.value("suite", json::object()).value("problems", json::array())) {
    const json level = p.value("level", json());
    problems.emplace_back(p.at("name").get<std::string>(), level.is_number_integer() ? std::to_string(level.get<int>()) : "");
  }
  for (const auto& [name, level] : problems) {
    if (index.problem_errors.count(name)) {
      out.problem_error_levels.push_back(level);
      continue;
    }
    const fs::path run = dir / kProblemsDir / name;
    if (!fs::exists(run / traj::kConfigFile)) continue;  // not started
    traj::ResumeState st;
    try {
      st = traj::RunStore::scan(run);
    } catch (const std::exception& e) {
      out.warnings.push_back(name + ": " + e.what());
      continue;
    }
    for (const auto& w : st.warnings) out.warnings.push_back(name + ": " + w);
    for (const auto& [sample, t] : st.finished) {
      std::optional<double> gpu;
      if (auto it = index.samples.find({name, sample}); it != index.samples.end())
        get_optional(it->second, "gpu_seconds", gpu);
      for (const auto& p : policy_names())
        out.rows[p].push_back(metrics::outcome_row(name, level, t, gpu, policy_from_string(p)));
    }
  }
  return out;
}

json collection_metrics(const fs::path& dir, const std::string& computed_by, std::vector<std::string>* warnings) {
  const CollectionOutcomes o = read_collection_outcomes(dir);
  if (warnings) warnings->insert(warnings->end(), o.warnings.begin(), o.warnings.end());
  return metrics::compute_policy_metrics(o.rows, o.policy, o.problem_error_levels, o.samples_per_problem, o.turns,
                                         computed_by);
}

json write_collection_metrics(const fs::path& dir, const std::string& computed_by, std::vector<std::string>* warnings) {
  json m = collection_metrics(dir, computed_by, warnings);
  write_file_atomic(dir / kMetricsFile, dump_json(m, 2) + "\n", true);
  write_file_atomic(dir / kMetricsCsvFile, metrics::metrics_csv(m), true);
  return m;
}

}  // namespace kagent::collect
