// A suite: the problems a collection runs. A folder of KernelBench problem files (its
// level1/ level2/ level3/ layout recognised: level and problem id recorded), a single level
// folder, a flat folder of problems, or a list file (one path a line, relative to the list's
// folder; '#' comments). Filters by level, id range and name pattern; shards that always put
// the same problem in the same shard.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent::collect {

struct SuiteProblem {
  std::string name;                 // unique in the suite: the file stem, made unique with its level
  std::string path;                 // absolute
  std::optional<int> level;         // from a "levelN" folder
  std::optional<int> problem_id;    // the stem's leading number ("19_ReLU" -> 19)
  std::string sha256;               // of the file's bytes
};
void to_json(nlohmann::json& j, const SuiteProblem& p);
void from_json(const nlohmann::json& j, SuiteProblem& p);

struct Suite {
  std::string root;                 // the folder or list file, absolute
  std::vector<SuiteProblem> problems;  // by level, then id, then name
};

// Why a suite cannot be used: kind "not_found" (no such file or folder, or a list names a
// missing file), "empty" (no problem files), "unreadable".
struct SuiteError : std::runtime_error {
  SuiteError(std::string kind_, const std::string& message) : std::runtime_error(message), kind(std::move(kind_)) {}
  std::string kind;
};

// Throws SuiteError.
Suite load_suite(const std::filesystem::path& path);

struct SuiteFilter {
  std::vector<int> levels;                          // empty: every level
  std::vector<std::pair<int, int>> id_ranges;       // inclusive; empty: every id
  std::string name_pattern;                         // ECMAScript regex searched in the name; empty: all
  bool empty() const { return levels.empty() && id_ranges.empty() && name_pattern.empty(); }
};

// "1-40,57,60-62" -> ranges. Throws std::invalid_argument with the offending part.
std::vector<std::pair<int, int>> parse_id_ranges(const std::string& text);
// Throws std::invalid_argument for a bad name pattern.
std::vector<SuiteProblem> filter_problems(const std::vector<SuiteProblem>& problems, const SuiteFilter& filter);
nlohmann::json to_json(const SuiteFilter& f);

// The shard (0-based) a problem belongs to among `count`: a hash of its name, so the same
// problem lands in the same shard whatever else the suite holds.
int shard_of(const std::string& name, int count);
std::vector<SuiteProblem> shard_problems(const std::vector<SuiteProblem>& problems, int index, int count);

// "i/n" -> {i, n}; throws std::invalid_argument unless 0 <= i < n.
std::pair<int, int> parse_shard(const std::string& text);

}  // namespace kagent::collect
