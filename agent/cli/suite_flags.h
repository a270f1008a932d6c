// The suite argument and its filters, shared by `kagent collect` and `kagent baselines`:
// --level, --ids, --match (and --shard for collect), turned into the problems to run or one
// error line with its exit status (usage 2, not found 3, empty 4 in both commands).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "collect/suite.h"

namespace kagent::cli {

struct SuiteFlags {
  std::string suite, ids, match, shard;
  std::vector<int> levels;
};

// The positional SUITE and --level, --ids, --match; --shard when `shards`.
void add_suite_flags(CLI::App& app, SuiteFlags& flags, bool shards);

struct Selection {
  collect::Suite suite;
  collect::SuiteFilter filter;
  std::vector<collect::SuiteProblem> problems;      // filtered, then this shard's
  std::optional<std::pair<int, int>> shard;
};

struct SelectionError {
  int exit_status;
  std::string line;
};

std::variant<Selection, SelectionError> select_problems(const SuiteFlags& flags);

}  // namespace kagent::cli
