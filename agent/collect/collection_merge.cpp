#include "collect/collection_merge.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "collect/baselines_table.h"
#include "collect/collection_metrics_file.h"
#include "collect/collection_store.h"
#include "common/files.h"
#include "common/utf8.h"
#include "trajectory/run_store.h"

namespace kagent::collect {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The first place two JSON values differ, as "a.b.c".
std::string first_difference(const json& a, const json& b, const std::string& at = "") {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
    for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
    for (const auto& k : keys) {
      const std::string path = at.empty() ? k : at + "." + k;
      if (!a.contains(k) || !b.contains(k)) return path;
      if (auto d = first_difference(a[k], b[k], path); !d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : (at.empty() ? "(top)" : at);
}

std::string show(const json& j, const std::string& dotted) {
  const json* at = &j;
  size_t pos = 0;
  while (pos <= dotted.size()) {
    const size_t dot = dotted.find('.', pos);
    const std::string key = dotted.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!at->is_object() || !at->contains(key)) return "(absent)";
    at = &(*at)[key];
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return at->dump();
}

// trajectories.jsonl as whole lines by sample (the first line of a sample wins).
std::map<int, std::string> trajectory_lines(const fs::path& run_dir) {
  std::map<int, std::string> lines;
  const fs::path file = run_dir / traj::kTrajectoriesFile;
  if (!fs::exists(file)) return lines;
  const std::string data = read_file(file);
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) break;  // torn: not a finished sample
    const std::string line = data.substr(pos, nl - pos);
    pos = nl + 1;
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("sample") && j["sample"].is_number_integer()) lines.emplace(j["sample"].get<int>(), line);
  }
  return lines;
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// Folds `src`'s samples that `dst` lacks into `dst`: their trajectory lines, candidates and
// (for samples finished nowhere) partial states.
int fold_problem(const fs::path& src, const fs::path& dst) {
  auto have = trajectory_lines(dst);
  int dropped = 0;
  std::string append;
  for (const auto& [sample, line] : trajectory_lines(src)) {
    if (have.count(sample)) {
      ++dropped;
      continue;
    }
    append += line + "\n";
    have.emplace(sample, line);
    std::error_code ec;
    fs::remove(dst / traj::kPartialDir / fmt::format("sample-{}.json", sample), ec);
    for (fs::directory_iterator it(src / "candidates", ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind(fmt::format("s{}-t", sample), 0) == 0) {
        fs::create_directories(dst / "candidates");
        fs::copy_file(it->path(), dst / "candidates" / it->path().filename(), fs::copy_options::overwrite_existing);
      }
  }
  if (!append.empty()) {
    const std::string before = fs::exists(dst / traj::kTrajectoriesFile) ? read_file(dst / traj::kTrajectoriesFile) : "";
    write_file_atomic(dst / traj::kTrajectoriesFile, before + append, true);
  }
  std::error_code ec;
  for (fs::directory_iterator it(src / traj::kPartialDir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path target = dst / traj::kPartialDir / it->path().filename();
    const std::string name = it->path().filename().string();
    int sample = -1;
    if (std::sscanf(name.c_str(), "sample-%d.json", &sample) != 1 || have.count(sample) || fs::exists(target)) continue;
    fs::create_directories(target.parent_path());
    fs::copy_file(it->path(), target);
  }
  return dropped;
}

}  // namespace

json merge_identity(const json& manifest) {
  json config = manifest.value("config", json::object());
  for (const char* k : {"order", "filters", "suite", "concurrency"}) config.erase(k);
  if (config.contains("eval") && config["eval"].is_object())
    for (const char* k : {"gpus", "cache_dir", "no_compile_cache", "timeout"}) config["eval"].erase(k);
  if (config.contains("llm") && config["llm"].is_object()) config["llm"].erase("base_url");
  const json versions = manifest.value("versions", json::object());
  return {{"config", config}, {"torch", versions.value("torch", "")}, {"gpu", versions.value("gpu", "")}};
}

MergeSummary merge_collections(const fs::path& out, const std::vector<fs::path>& runs) {
  if (runs.empty()) throw MergeError("not_a_collection", "--merge needs at least one collection to read");
  std::vector<json> manifests;
  for (const auto& r : runs) {
    try {
      manifests.push_back(read_manifest(r));
    } catch (const NotACollection& e) {
      throw MergeError("not_a_collection", e.what());
    }
  }
  const json identity = merge_identity(manifests[0]);
  for (size_t i = 1; i < runs.size(); ++i) {
    const json other = merge_identity(manifests[i]);
    if (other == identity) continue;
    const std::string at = first_difference(identity, other);
    throw MergeError("mixed_config", fmt::format("{} and {} were collected with different settings ({}: {} vs {})",
                                                 runs[0].string(), runs[i].string(), at, show(identity, at), show(other, at)));
  }
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out) && fs::is_empty(out)))
    throw MergeError("out_exists", out.string() + " exists and is not empty: merge into a new folder");

  // The problems, in the order the runs list them; a name must mean the same file everywhere.
  std::vector<json> problems;
  std::map<std::string, std::string> sha_of;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& p : manifests[i].value("suite", json::object()).value("problems", json::array())) {
      const std::string name = p.at("name").get<std::string>(), sha = p.value("sha256", "");
      auto [it, fresh] = sha_of.emplace(name, sha);
      if (fresh) problems.push_back(p);
      else if (it->second != sha)
        throw MergeError("mixed_config", fmt::format("problem {} is a different file in {} (sha256 {} vs {})", name,
                                                     runs[i].string(), sha.substr(0, 12), it->second.substr(0, 12)));
    }

  MergeSummary summary;
  json manifest = manifests[0];
  manifest["shard"] = nullptr;
  manifest["suite"]["problems"] = problems;
  manifest["created_at"] = traj::now_iso8601();
  manifest["merged_from"] = json::array();
  for (const auto& r : runs) manifest["merged_from"].push_back(fs::absolute(r).lexically_normal().string());
  auto store = CollectionStore::create(out, manifest);

  std::vector<IndexState> indexes;
  for (const auto& r : runs) indexes.push_back(read_index(r / kIndexFile));
  json baselines = json::object();
  for (const auto& r : runs)
    if (fs::exists(r / kBaselinesFile)) baselines = merge_baselines(baselines, json::parse(read_file(r / kBaselinesFile)));

  for (const auto& p : problems) {
    const std::string name = p.at("name").get<std::string>();
    const fs::path dst = store->problem_dir(name);
    bool have = false;
    for (const auto& r : runs) {
      const fs::path src = r / kProblemsDir / name;
      if (!fs::exists(src / traj::kConfigFile)) continue;
      if (!have) copy_tree(src, dst);
      else summary.duplicates_dropped += fold_problem(src, dst);
      have = true;
    }
    if (!have) {
      for (const auto& ix : indexes)
        if (auto it = ix.problem_errors.find(name); it != ix.problem_errors.end()) {
          store->record_problem_error(name, it->second.value("reason", ""));
          ++summary.problem_errors;
          break;
        }
      continue;
    }
    // Reopening rewrites best.* and summary.json from the merged records (and drops stale partials).
    auto run = traj::RunStore::open(dst);
    for (const auto& [sample, t] : run->resume().finished) {
      store->record_sample(name, t);
      ++summary.samples;
    }
    for (const auto& w : run->resume().warnings) summary.warnings.push_back(name + ": " + w);
  }
  summary.problems = static_cast<int>(problems.size());
  if (!baselines.empty()) store->write_file(kBaselinesFile, dump_json(baselines, 2) + "\n");
  write_collection_metrics(out, "kagent collect --merge");
  store->write_file(kSummaryFile, json({{"problems", summary.problems},
                                        {"samples_done", summary.samples},
                                        {"problem_errors", summary.problem_errors},
                                        {"duplicates_dropped", summary.duplicates_dropped},
                                        {"merged_from", manifest["merged_from"]},
                                        {"updated_at", traj::now_iso8601()}})
                                      .dump(2) +
                                      "\n");
  return summary;
}

}  // namespace kagent::collect
