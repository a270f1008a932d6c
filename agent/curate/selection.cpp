#include "curate/selection.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/json_optional.h"
#include "curate/code_fingerprint.h"

namespace kagent::curate {

void to_json(nlohmann::json& j, const Criteria& c) {
  j = {{"min_speedup_eager", c.min_speedup},
       {"per_task", c.per_task},
       {"single_per_fused", json_or_null(c.single_per_fused)},
       {"dedupe", c.dedupe},
       {"guards", "no guard rejected or flagged the kernel"},
       {"reasoning_length", "characters of the reasoning text"}};
}

void to_json(nlohmann::json& j, const SelectionCounts& c) {
  j = {{"turns", c.turns}, {"correct_and_fast", c.correct_fast}, {"dropped_by_guards", c.guarded},
       {"dropped_duplicates", c.duplicates}, {"dropped_over_task_limit", c.over_task_limit},
       {"dropped_by_balance", c.balance_dropped}, {"selected", c.selected},
       {"single_op", c.single_op}, {"fused", c.fused}};
}

namespace {

// Shorter reasoning first; ties keep the order they were read in.
bool shorter(const Selected& a, const Selected& b) {
  return std::tie(a.reasoning_chars, a.source, a.turn) < std::tie(b.reasoning_chars, b.source, b.turn);
}

}  // namespace

Selection select(const std::vector<dataset::SourceTrajectory>& runs, const Criteria& criteria) {
  Selection s;
  std::vector<Selected> rows;
  for (const auto& src : runs) {
    for (const auto& turn : src.trajectory.turns) {
      ++s.counts.turns;
      const auto speedup = turn.speedup_eager();
      if (!turn.correct() || !speedup || *speedup < criteria.min_speedup) continue;
      ++s.counts.correct_fast;
      if (!turn.eval->guards.empty()) {  // any finding, reject or flag, keeps it out
        ++s.counts.guarded;
        continue;
      }
      rows.push_back({&src, turn.index, turn.reasoning.size(), *speedup, dataset::is_single_op(src.trajectory.problem),
                      code_fingerprint(turn.code)});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), shorter);
  if (criteria.dedupe) {
    std::map<std::string, bool> seen;
    std::vector<Selected> kept;
    for (auto& r : rows)
      if (seen.emplace(r.fingerprint, true).second) kept.push_back(std::move(r));
      else ++s.counts.duplicates;
    rows = std::move(kept);
  }
  {
    std::map<std::string, int> per_task;
    std::vector<Selected> kept;
    for (auto& r : rows)
      if (++per_task[dataset::task_of(r.source->trajectory)] <= criteria.per_task) kept.push_back(std::move(r));
      else ++s.counts.over_task_limit;
    rows = std::move(kept);
  }
  if (criteria.single_per_fused && *criteria.single_per_fused > 0 && !rows.empty()) {
    const double ratio = *criteria.single_per_fused;
    const auto singles = std::count_if(rows.begin(), rows.end(), [](const Selected& r) { return r.single_op; });
    const auto fused = static_cast<long>(rows.size()) - singles;
    if (singles == 0 || fused == 0)
      s.empty_reason = fmt::format("--single-per-fused {:g} drops all {}: they are all {}, with no {} row to balance against",
                                   ratio, rows.size(), singles ? "single-operator" : "fused", singles ? "fused" : "single-operator");
    long keep_single = singles, keep_fused = fused;
    if (singles > ratio * fused) keep_single = static_cast<long>(std::floor(ratio * fused + 1e-9));
    else keep_fused = static_cast<long>(std::floor(singles / ratio + 1e-9));
    std::vector<Selected> kept;
    long n_single = 0, n_fused = 0;
    for (auto& r : rows) {  // shortest reasoning first, so the longest are dropped
      long& n = r.single_op ? n_single : n_fused;
      if (n < (r.single_op ? keep_single : keep_fused)) {
        ++n;
        kept.push_back(std::move(r));
      } else {
        ++s.counts.balance_dropped;
      }
    }
    rows = std::move(kept);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Selected& a, const Selected& b) {
    return dataset::task_of(a.source->trajectory) < dataset::task_of(b.source->trajectory) ||
           (dataset::task_of(a.source->trajectory) == dataset::task_of(b.source->trajectory) && shorter(a, b));
  });
  for (const auto& r : rows) ++(r.single_op ? s.counts.single_op : s.counts.fused);
  s.counts.selected = static_cast<int>(rows.size());
  if (!rows.empty()) s.empty_reason.clear();
  else if (s.counts.turns == 0) s.empty_reason = "the runs hold no finished turn";
  else if (s.counts.correct_fast == 0)
    s.empty_reason = fmt::format("no turn is correct with a speedup over eager of at least {:g}", criteria.min_speedup);
  else if (s.counts.guarded == s.counts.correct_fast)
    s.empty_reason = fmt::format("a guard rejected or flagged every one of the {} correct turns fast enough", s.counts.correct_fast);
  s.rows = std::move(rows);
  return s;
}

}  // namespace kagent::curate
