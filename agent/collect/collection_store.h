// The collection folder of `kagent collect` (docs/collection_format.md): manifest.json (config,
// versions, shard, suite), the append-only index.jsonl (one line per finished (problem, sample),
// one per problem that cannot run), problems/<name>/ (a `kagent solve` run folder each) and the
// files written at the end (baselines.json, metrics.json/.csv, summary.json).
// An index line is appended after its trajectory is durable, with one write and an fsync, and
// never twice: a killed run loses at most lines that open() restores from the trajectories.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fd.h"
#include "trajectory/trajectory.h"

namespace kagent::collect {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kIndexFile = "index.jsonl";
inline constexpr const char* kProblemsDir = "problems";
inline constexpr const char* kBaselinesFile = "baselines.json";
inline constexpr const char* kMetricsFile = "metrics.json";
inline constexpr const char* kMetricsCsvFile = "metrics.csv";
inline constexpr const char* kSummaryFile = "summary.json";
inline constexpr const char* kCollectionKind = "kagent-collection";
inline constexpr int kCollectionSchema = 1;

// A folder that holds no collection (no manifest.json, or not a collection's).
struct NotACollection : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// index.jsonl as read back: the first line of each (problem, sample) wins.
struct IndexState {
  std::map<std::pair<std::string, int>, nlohmann::json> samples;  // status finished | failed
  std::map<std::string, nlohmann::json> problem_errors;           // problem -> its line
  std::vector<std::string> warnings;
};
IndexState read_index(const std::filesystem::path& file);

// The index line of a finished sample.
nlohmann::json index_line(const std::string& problem, const traj::Trajectory& t);

// Reads dir/manifest.json; throws NotACollection.
nlohmann::json read_manifest(const std::filesystem::path& dir);

class CollectionStore {
 public:
  // A new collection at `dir` (created when missing; must hold no collection yet).
  static std::unique_ptr<CollectionStore> create(const std::filesystem::path& dir, const nlohmann::json& manifest);
  // An existing one: cuts a torn last line off index.jsonl. Throws NotACollection.
  static std::unique_ptr<CollectionStore> open(const std::filesystem::path& dir);

  CollectionStore(const CollectionStore&) = delete;
  CollectionStore& operator=(const CollectionStore&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const nlohmann::json& manifest() const { return manifest_; }
  std::filesystem::path problem_dir(const std::string& name) const { return dir_ / kProblemsDir / name; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Appends the sample's line unless the index has it already (then false). Thread-safe.
  bool record_sample(const std::string& problem, const traj::Trajectory& t);
  bool record_problem_error(const std::string& problem, const std::string& reason);
  bool has_sample(const std::string& problem, int sample) const;
  bool has_problem_error(const std::string& problem) const;
  std::optional<std::string> problem_error(const std::string& problem) const;

  // Replaces dir/name atomically.
  void write_file(const std::string& name, const std::string& text) const;

 private:
  CollectionStore(std::filesystem::path dir, nlohmann::json manifest);
  void append_locked(const nlohmann::json& line);

  std::filesystem::path dir_;
  nlohmann::json manifest_;
  mutable std::mutex mu_;
  Fd index_fd_;
  std::set<std::pair<std::string, int>> samples_;
  std::map<std::string, std::string> problem_errors_;
  std::vector<std::string> warnings_;
};

}  // namespace kagent::collect
