#include "report/collection_data.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "common/files.h"
#include "common/json_optional.h"
#include "metrics/collection_metrics.h"
#include "result/policy.h"
#include "report/json_lines_file.h"
#include "report/report_error.h"
#include "report/run_data.h"
#include "report/run_records.h"

namespace kagent::report {

namespace fs = std::filesystem;
using nlohmann::json;
using metrics::SampleOutcomeRow;

namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kIndex = "index.jsonl";
constexpr const char* kProblemsDir = "problems";
constexpr const char* kCollectionKind = "kagent-collection";

std::string level_string(const json& level) {
  if (level.is_number_integer()) return std::to_string(level.get<int>());
  if (level.is_string()) return level.get<std::string>();
  return {};
}

// An optional JSON file of the collection: null when absent, a warning when unreadable.
json read_optional(const fs::path& file, std::vector<std::string>& warnings) {
  if (!fs::exists(file)) return nullptr;
  try {
    return json::parse(read_file(file));
  } catch (const std::exception& e) {
    warnings.push_back(file.filename().string() + " unreadable: " + e.what());
    return nullptr;
  }
}

struct IndexLine {
  std::string status;            // "finished" | "failed" | "problem_error"
  std::string reason;
  std::optional<double> gpu_seconds;
};

// index.jsonl: problem -> sample -> its line; problem errors under sample -1.
std::map<std::string, std::map<int, IndexLine>> read_index(const fs::path& file, std::vector<std::string>& warnings) {
  std::map<std::string, std::map<int, IndexLine>> out;
  read_json_lines(file, warnings, [&](std::string_view line, size_t) {
    const json j = json::parse(line);
    IndexLine l{get_or<std::string>(j, "status", ""), get_or<std::string>(j, "reason", ""), std::nullopt};
    get_optional(j, "gpu_seconds", l.gpu_seconds);
    out[j.at("problem").get<std::string>()][l.status == "problem_error" ? -1 : get_or<int>(j, "sample", 0)] = l;
  });
  return out;
}

// One problem as the suite lists it.
struct ProblemEntry {
  std::string name, level, op_type;
};

std::vector<ProblemEntry> list_problems(const json& manifest, const fs::path& dir) {
  std::vector<ProblemEntry> list;
  std::set<std::string> seen;
  const json suite = manifest.value("suite", json::object());
  for (const auto& p : suite.value("problems", json::array())) {
    if (!p.is_object() || !p.contains("name")) continue;
    ProblemEntry e{p["name"].get<std::string>(), level_string(p.value("level", json())), get_or<std::string>(p, "op_type", "")};
    if (seen.insert(e.name).second) list.push_back(std::move(e));
  }
  // Folders that the manifest does not list (a merged shard, a hand-made collection).
  std::error_code ec;
  std::vector<std::string> extra;
  for (fs::directory_iterator it(dir / kProblemsDir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory() && !seen.count(it->path().filename().string())) extra.push_back(it->path().filename().string());
  std::sort(extra.begin(), extra.end());
  for (auto& name : extra) list.push_back({std::move(name), "", ""});
  return list;
}

struct ProblemResult {
  json row;
  metrics::RowsByPolicy outcomes;  // the metrics' samples, under every policy
  std::vector<std::string> warnings;
};

ProblemResult read_problem(const fs::path& dir, const ProblemEntry& p, const std::map<int, IndexLine>* index) {
  ProblemResult out;
  json row = {{"name", p.name}, {"level", p.level}, {"op_type", p.op_type}};
  const fs::path run_dir = dir / kProblemsDir / p.name;
  if (index && index->count(-1)) {
    row["outcome"] = "problem_error";
    row["reason"] = index->at(-1).reason;
    out.row = std::move(row);
    return out;
  }
  if (!is_run_folder(run_dir)) {
    row["outcome"] = "not_started";
    out.row = std::move(row);
    return out;
  }
  RunRecords rec;
  try {
    rec = read_run_records(run_dir, Detail::Compact);
  } catch (const std::exception& e) {
    out.warnings.push_back(p.name + ": " + e.what());
    row["outcome"] = "unreadable";
    out.row = std::move(row);
    return out;
  }
  for (const auto& w : rec.warnings) out.warnings.push_back(p.name + ": " + w);
  int correct = 0, finished = 0, failed = 0;
  double tokens = 0, gpu = 0;
  json sample_speedups = json::array();
  std::optional<double> best_e, best_c;
  for (const auto& t : rec.samples) {
    std::optional<double> index_gpu;
    if (index)
      if (auto it = index->find(t.sample); it != index->end()) index_gpu = it->second.gpu_seconds;
    SampleOutcomeRow r = metrics::outcome_row(p.name, p.level, t, index_gpu);
    tokens += r.tokens;
    gpu += r.gpu_seconds;
    if (r.correct) ++correct;
    if (r.speedup_eager) best_e = std::max(best_e.value_or(0.0), *r.speedup_eager);
    if (r.speedup_compiled) best_c = std::max(best_c.value_or(0.0), *r.speedup_compiled);
    if (!t.done()) continue;
    ++finished;
    failed += t.status == traj::SampleStatus::Failed ? 1 : 0;
    json s = {{"correct", r.correct}};
    put_optional(s, "speedup_eager", r.speedup_eager);
    put_optional(s, "speedup_compiled", r.speedup_compiled);
    sample_speedups.push_back(std::move(s));
    for (const auto& policy : policy_names())
      out.outcomes[policy].push_back(metrics::outcome_row(p.name, p.level, t, index_gpu, policy_from_string(policy)));
  }
  json run = run_page_data(run_dir, rec, Detail::Compact);
  const int expected = run["samples_expected"].get<int>();
  if (correct > 0) row["outcome"] = "solved";
  else if (finished < expected) row["outcome"] = "running";
  else if (failed == finished && finished > 0) row["outcome"] = "failed";
  else row["outcome"] = "unsolved";
  put_optional(row, "best_speedup_eager", best_e);
  put_optional(row, "best_speedup_compiled", best_c);
  row["samples"] = expected;
  row["samples_done"] = finished;
  row["samples_correct"] = correct;
  row["tokens"] = tokens;
  row["gpu_seconds"] = gpu;
  row["sample_speedups"] = std::move(sample_speedups);
  row["run"] = std::move(run);
  out.row = std::move(row);
  return out;
}

}  // namespace

bool is_collection_folder(const fs::path& dir) { return fs::is_regular_file(dir / kManifest); }

json read_collection_manifest(const fs::path& dir) {
  json manifest;
  try {
    manifest = json::parse(read_file(dir / kManifest));
  } catch (const std::exception& e) {
    throw ReportError(report_exit::kUnreadable, (dir / kManifest).string() + " is unreadable: " + e.what());
  }
  if (!manifest.is_object() || manifest.value("kind", "") != kCollectionKind)
    throw ReportError(report_exit::kNotARun,
                      (dir / kManifest).string() + " is not a kagent collection's manifest (kind is not \"" +
                          kCollectionKind + "\")");
  return manifest;
}

json collection_page_data(const fs::path& dir) {
  const json manifest = read_collection_manifest(dir);
  std::vector<std::string> warnings;
  const auto index = read_index(dir / kIndex, warnings);
  const std::vector<ProblemEntry> problems = list_problems(manifest, dir);

  // Problems are independent folders: read them on all cores, each result in its own slot.
  std::vector<ProblemResult> results(problems.size());
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < problems.size(); i = next++) {
        auto it = index.find(problems[i].name);
        try {
          results[i] = read_problem(dir, problems[i], it == index.end() ? nullptr : &it->second);
        } catch (const std::exception& e) {  // a malformed record must not end the other threads
          results[i].row = {{"name", problems[i].name}, {"level", problems[i].level}, {"outcome", "unreadable"}};
          results[i].warnings.push_back(problems[i].name + ": " + e.what());
        }
      }
    };
    std::vector<std::jthread> pool;
    for (size_t w = 1; w < std::min(workers, problems.size()); ++w) pool.emplace_back(work);
    work();
  }

  json rows = json::array();
  metrics::RowsByPolicy outcomes;
  std::vector<std::string> error_levels;
  for (size_t i = 0; i < problems.size(); ++i) {
    auto& r = results[i];
    for (auto& w : r.warnings) warnings.push_back(std::move(w));
    for (auto& [policy, rows] : r.outcomes)
      for (auto& o : rows) outcomes[policy].push_back(std::move(o));
    if (r.row.value("outcome", "") == "problem_error") error_levels.push_back(problems[i].level);
    rows.push_back(std::move(r.row));
  }

  const json config = manifest.value("config", json::object());
  json metric_table = read_optional(dir / "metrics.json", warnings);
  if (metric_table.is_null())
    metric_table = metrics::compute_policy_metrics(outcomes, metrics::collection_policy(config), error_levels,
                                                   get_or<int>(config, "samples", 1), get_or<int>(config, "turns", 1),
                                                   "kagent report (no metrics.json in the collection)");
  json m = manifest;
  if (m.contains("suite") && m["suite"].is_object()) m["suite"].erase("problems");  // the rows carry them
  return {{"dir", fs::absolute(dir).lexically_normal().string()},
          {"manifest", std::move(m)},
          {"summary", read_optional(dir / "summary.json", warnings)},
          {"baselines", read_optional(dir / "baselines.json", warnings)},
          {"metrics", std::move(metric_table)},
          {"warnings", std::move(warnings)},
          {"problems", std::move(rows)}};
}

}  // namespace kagent::report
