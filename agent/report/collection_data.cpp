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

// A turn's key in the verdict breakdown under `policy`: its status, a rejection with the guard
// that rejected it (rejected:no_kernel), no_gpu for a turn compiled but not run, or why the
// turn has no verdict (no_verdict:format, ...), so that no kind of failure hides in another.
std::string verdict_key(const traj::Turn& t, Policy policy) {
  if (t.error) return "no_verdict:" + (t.error->kind.empty() ? std::string("error") : t.error->kind);
  if (!t.eval) return "no_verdict:pending";
  const PolicyVerdict v = verdict_under(*t.eval, policy);
  if (v.reason == reason::kNoGpu) return "no_gpu";
  if (v.status == Status::Rejected) return "rejected:" + (v.reason.empty() ? std::string("unknown") : v.reason);
  return to_string(v.status);
}

// A problem's numbers under one policy: its samples judged by that policy's verdicts.
struct PolicyTally {
  int samples_correct = 0;
  std::optional<double> best_e, best_c;
  std::map<std::string, int> verdicts;
};

std::string outcome_of(int correct, int finished, int expected, int failed) {
  if (correct > 0) return "solved";
  if (finished < expected) return "running";
  if (failed == finished && finished > 0) return "failed";
  return "unsolved";
}

struct ProblemResult {
  json row;
  metrics::RowsByPolicy outcomes;  // the metrics' samples, under every policy
  std::map<std::string, PolicyTally> tallies;  // the row's "policies", for the collection's totals
  int timed_eager = 0, timed_compiled = 0;     // turns timed against each baseline
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
  int correct = 0, finished = 0, failed = 0, timed_e = 0, timed_c = 0;
  double tokens = 0, gpu = 0;
  json sample_speedups = json::array();
  std::optional<double> best_e, best_c;
  std::map<std::string, PolicyTally> tallies;
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
    // Whether a baseline was ever timed, whatever the verdict: a page must not show 0% for a
    // speedup nobody measured.
    for (const auto& turn : t.turns) {
      timed_e += turn.speedup_eager() ? 1 : 0;
      timed_c += turn.speedup_compiled() ? 1 : 0;
    }
    json by_policy = json::object();
    for (const auto& policy : policy_names()) {
      const Policy pol = policy_from_string(policy);
      const SampleOutcomeRow pr = metrics::outcome_row(p.name, p.level, t, index_gpu, pol);
      PolicyTally& tally = tallies[policy];
      if (pr.correct) ++tally.samples_correct;
      if (pr.speedup_eager) tally.best_e = std::max(tally.best_e.value_or(0.0), *pr.speedup_eager);
      if (pr.speedup_compiled) tally.best_c = std::max(tally.best_c.value_or(0.0), *pr.speedup_compiled);
      for (const auto& turn : t.turns) ++tally.verdicts[verdict_key(turn, pol)];
      if (!t.done()) continue;
      json s = {{"correct", pr.correct}};
      put_optional(s, "speedup_eager", pr.speedup_eager);
      put_optional(s, "speedup_compiled", pr.speedup_compiled);
      by_policy[policy] = std::move(s);
      out.outcomes[policy].push_back(pr);
    }
    if (!t.done()) continue;
    ++finished;
    failed += t.status == traj::SampleStatus::Failed ? 1 : 0;
    json s = {{"correct", r.correct}};
    put_optional(s, "speedup_eager", r.speedup_eager);
    put_optional(s, "speedup_compiled", r.speedup_compiled);
    s["policies"] = std::move(by_policy);
    sample_speedups.push_back(std::move(s));
  }
  json run = run_page_data(run_dir, rec, Detail::Compact);
  const int expected = run["samples_expected"].get<int>();
  row["outcome"] = outcome_of(correct, finished, expected, failed);
  json policies = json::object();
  for (const auto& [policy, tally] : tallies) {
    json pj = {{"outcome", outcome_of(tally.samples_correct, finished, expected, failed)},
               {"samples_correct", tally.samples_correct},
               {"verdicts", tally.verdicts}};
    put_optional(pj, "best_speedup_eager", tally.best_e);
    put_optional(pj, "best_speedup_compiled", tally.best_c);
    policies[policy] = std::move(pj);
  }
  row["policies"] = std::move(policies);
  row["timed_turns"] = {{"eager", timed_e}, {"compiled", timed_c}};
  out.tallies = std::move(tallies);
  out.timed_eager = timed_e;
  out.timed_compiled = timed_c;
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
  // Both policies' numbers over the whole collection, side by side on the page.
  struct PolicyTotals {
    int solved = 0, samples_correct = 0;
    std::map<std::string, int> verdicts;
  };
  std::map<std::string, PolicyTotals> totals;
  int timed_e = 0, timed_c = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    auto& r = results[i];
    for (const auto& [policy, tally] : r.tallies) {
      PolicyTotals& t = totals[policy];
      t.solved += tally.samples_correct > 0 ? 1 : 0;  // outcome_of's "solved"
      t.samples_correct += tally.samples_correct;
      for (const auto& [key, n] : tally.verdicts) t.verdicts[key] += n;
    }
    timed_e += r.timed_eager;
    timed_c += r.timed_compiled;
    for (auto& w : r.warnings) warnings.push_back(std::move(w));
    for (auto& [policy, rows] : r.outcomes)
      for (auto& o : rows) outcomes[policy].push_back(std::move(o));
    if (r.row.value("outcome", "") == "problem_error") error_levels.push_back(problems[i].level);
    rows.push_back(std::move(r.row));
  }

  const json config = manifest.value("config", json::object());
  const std::string ruling = metrics::collection_policy(config);
  json metric_table = read_optional(dir / "metrics.json", warnings);
  // Where the numbers came from is said by this flag, not by computed_by: collect's metrics.json
  // has a computed_by too ("kagent collect").
  const bool from_file = metric_table.is_object();
  if (!from_file || !metric_table.contains("policies")) {
    json computed = metrics::compute_policy_metrics(outcomes, ruling, error_levels, get_or<int>(config, "samples", 1),
                                                    get_or<int>(config, "turns", 1),
                                                    "kagent report (no metrics.json in the collection)");
    if (!from_file) {
      metric_table = std::move(computed);
    } else {  // a metrics.json from before policies: its groups stand, the other policy's are computed
      const std::string own = get_or<std::string>(metric_table, "policy", ruling);
      metric_table["policies"] = std::move(computed["policies"]);
      if (metric_table.contains("groups")) metric_table["policies"][own] = metric_table["groups"];
      metric_table["policy"] = own;
      metric_table["policies_computed"] = true;
    }
  }

  json policies = json::object();
  for (const auto& policy : policy_names()) {
    const PolicyTotals& t = totals[policy];
    int turns = 0;
    for (const auto& [key, n] : t.verdicts) turns += n;
    policies[policy] = {{"problems_solved", t.solved}, {"samples_correct", t.samples_correct}, {"turns", turns},
                        {"verdicts", t.verdicts}};
  }
  json m = manifest;
  if (m.contains("suite") && m["suite"].is_object()) m["suite"].erase("problems");  // the rows carry them
  return {{"dir", fs::absolute(dir).lexically_normal().string()},
          {"manifest", std::move(m)},
          {"summary", read_optional(dir / "summary.json", warnings)},
          {"baselines", read_optional(dir / "baselines.json", warnings)},
          {"metrics", std::move(metric_table)},
          {"metrics_source", from_file ? "metrics.json" : "computed"},
          {"policy", ruling},
          {"policies", std::move(policies)},
          {"timed_turns", {{"eager", timed_e}, {"compiled", timed_c}}},
          {"warnings", std::move(warnings)},
          {"problems", std::move(rows)}};
}

}  // namespace kagent::report
