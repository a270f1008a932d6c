// A collection folder reduced to what must not depend on how it was run (killed and resumed,
// sharded and merged, or in one go): every finished trajectory by (problem, sample) with its
// volatile fields (timestamps, latencies, compile times and logs, cache flags) removed, the
// index's lines, and the metrics without their time stamp and GPU-seconds.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/files.h"

namespace kagent::testing {

struct CollectionDigest {
  std::map<std::pair<std::string, int>, nlohmann::json> trajectories;
  std::vector<std::string> duplicate_lines;               // (problem, sample) seen twice in trajectories.jsonl
  std::multiset<std::string> index_lines;                 // normalized index lines (one per pair: checked by the set size)
  std::map<std::string, int> index_count;                 // "problem/sample" or "problem/error" -> lines
  nlohmann::json metrics;
};

inline void strip_volatile(nlohmann::json& j) {
  static const std::set<std::string> kVolatile = {
      "started_at", "finished_at", "updated_at", "at", "generated_at", "created_at", "computed_by",
      "llm_seconds", "eval_seconds", "total_seconds", "seconds", "cache_hit", "log", "command", "artifact",
      "worker_log_tail", "phases", "gpu_seconds", "gpu_seconds_per_problem", "run_id", "first_token_s",
      "peak_rss_mb",   // the compiler's peak memory: 0 on a cache hit
      "scratch", "redirected"};  // the sandbox's per-worker folder, and the paths under it
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (kVolatile.count(it.key())) it = j.erase(it);
      else strip_volatile(*it++);
    }
  } else if (j.is_array()) {
    for (auto& e : j) strip_volatile(e);
  }
}

inline std::vector<nlohmann::json> json_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  if (!std::filesystem::exists(file)) return out;
  const std::string data = kagent::read_file(file);
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) nl = data.size();
    const std::string line = data.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

inline CollectionDigest digest_collection(const std::filesystem::path& dir) {
  CollectionDigest d;
  for (const auto& e : std::filesystem::directory_iterator(dir / "problems")) {
    const std::string problem = e.path().filename().string();
    for (auto t : json_lines(e.path() / "trajectories.jsonl")) {
      const int sample = t.at("sample").get<int>();
      strip_volatile(t);
      if (!d.trajectories.emplace(std::pair(problem, sample), t).second)
        d.duplicate_lines.push_back(problem + "/" + std::to_string(sample));
    }
  }
  for (auto line : json_lines(dir / "index.jsonl")) {
    const std::string key = line.at("problem").get<std::string>() + "/" +
                            (line.value("status", "") == "problem_error" ? std::string("error")
                                                                         : std::to_string(line.at("sample").get<int>()));
    ++d.index_count[key];
    strip_volatile(line);
    d.index_lines.insert(line.dump());
  }
  if (std::filesystem::exists(dir / "metrics.json")) {
    d.metrics = nlohmann::json::parse(kagent::read_file(dir / "metrics.json"));
    strip_volatile(d.metrics);
  }
  return d;
}

}  // namespace kagent::testing
