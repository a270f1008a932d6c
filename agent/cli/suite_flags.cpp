#include "cli/suite_flags.h"

#include <fmt/format.h>

namespace kagent::cli {

namespace {
constexpr int kUsage = 2, kNotFound = 3, kEmpty = 4;
}

void add_suite_flags(CLI::App& app, SuiteFlags& f, bool shards) {
  app.add_option("suite", f.suite, "a folder of problem files (KernelBench's level1/ level2/ level3/ layout too) or a list file");
  app.add_option("--level", f.levels, "only these levels, e.g. 1,2")->delimiter(',')->check(CLI::Range(1, 99));
  app.add_option("--ids", f.ids, "only these problem ids, e.g. 1-40,57");
  app.add_option("--match", f.match, "only problems whose name matches this regular expression");
  if (shards)
    app.add_option("--shard", f.shard,
                   "run shard i of n (0 <= i < n), e.g. 0/4: the same problem always lands in the same shard");
}

std::variant<Selection, SelectionError> select_problems(const SuiteFlags& f) {
  Selection s;
  try {
    if (!f.shard.empty()) s.shard = collect::parse_shard(f.shard);
    s.filter.levels = f.levels;
    if (!f.ids.empty()) s.filter.id_ranges = collect::parse_id_ranges(f.ids);
    s.filter.name_pattern = f.match;
  } catch (const std::invalid_argument& e) {
    return SelectionError{kUsage, e.what()};
  }
  try {
    s.suite = collect::load_suite(f.suite);
  } catch (const collect::SuiteError& e) {
    return SelectionError{e.kind == "empty" ? kEmpty : kNotFound, e.what()};
  }
  try {
    s.problems = collect::filter_problems(s.suite.problems, s.filter);
  } catch (const std::invalid_argument& e) {
    return SelectionError{kUsage, e.what()};
  }
  if (s.problems.empty())
    return SelectionError{kEmpty, fmt::format("no problem of the suite {} ({} problems) passes the filters", s.suite.root,
                                              s.suite.problems.size())};
  if (s.shard) s.problems = collect::shard_problems(s.problems, s.shard->first, s.shard->second);
  return s;
}

}  // namespace kagent::cli
