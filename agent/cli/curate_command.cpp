#include "cli/curate_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/dataset_exit.h"
#include "cli/errors.h"
#include "cli/flag_checks.h"
#include "common/files.h"
#include "curate/dataset_card.h"
#include "curate/reasoning_stats.h"
#include "curate/sft_rows.h"
#include "dataset/jsonl_writer.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct CurateArgs {
  std::vector<std::string> runs;
  std::string out, reasoning = "think";
  curate::Criteria criteria;
  double single_per_fused = 0;
  bool keep_duplicates = false, allow_empty = false, quiet = false;
};

int run_curate(CurateArgs a) {
  std::vector<fs::path> paths(a.runs.begin(), a.runs.end());
  dataset::SourceRuns src;
  try {
    src = dataset::read_runs(paths);
  } catch (const report::ReportError& e) {
    print_error("curate", e.what());
    return e.exit_status();
  }
  for (const auto& w : src.warnings)
    if (!a.quiet) print_warning("curate", w);
  if (a.single_per_fused > 0) a.criteria.single_per_fused = a.single_per_fused;
  a.criteria.dedupe = !a.keep_duplicates;
  const auto selection = curate::select(src.trajectories, a.criteria);
  std::vector<std::string> warnings;
  if (selection.rows.empty()) {
    const std::string why = fmt::format("0 rows from {} turns: {}", selection.counts.turns,
                                        selection.empty_reason.empty() ? "nothing passes the criteria" : selection.empty_reason);
    if (!a.allow_empty) {
      print_error("curate", why + "; nothing written (--allow-empty writes the empty set)");
      return dataset_exit::kNoSignal;
    }
    warnings.push_back(why);
    if (!a.quiet) print_warning("curate", why);
  }
  const auto style = a.reasoning == "think" ? curate::ReasoningStyle::ThinkBlock : curate::ReasoningStyle::ReasoningContent;
  std::set<std::string> tasks;
  for (const auto& r : selection.rows) tasks.insert(dataset::task_of(r.source->trajectory));
  try {
    fs::create_directories(a.out);
    dataset::write_jsonl(fs::path(a.out) / "train.jsonl", curate::sft_rows(selection, style));
    curate::CardInputs card{a.criteria, selection.counts, src.sources, src.versions, a.reasoning, static_cast<int>(tasks.size())};
    write_file_atomic(fs::path(a.out) / "README.md", curate::dataset_card(card), true);
    write_file_atomic(fs::path(a.out) / "stats.json", curate::reasoning_stats(src.trajectories).dump(2) + "\n", true);
    nlohmann::json summary = {{"criteria", a.criteria}, {"counts", selection.counts}, {"sources", src.sources},
                              {"versions", src.versions}, {"reasoning", a.reasoning}, {"warnings", warnings}};
    write_file_atomic(fs::path(a.out) / "curate.json", summary.dump(2) + "\n", true);
  } catch (const std::exception& e) {
    print_error("curate", "cannot write " + a.out + ": " + e.what());
    return dataset_exit::kCannotWrite;
  }
  if (!a.quiet)
    std::cout << fmt::format("{} rows from {} turns ({} tasks) -> {}\n", selection.counts.selected, selection.counts.turns,
                             tasks.size(), (fs::path(a.out) / "train.jsonl").string());
  return dataset_exit::kWritten;
}

}  // namespace

Command add_curate_command(CLI::App& app) {
  auto a = std::make_shared<CurateArgs>();
  CLI::App* sub = app.add_subcommand("curate", "Select supervised training data from runs and collections (ConCuR)");
  sub->add_option("runs", a->runs, "solve run folders and collection folders")->required();
  sub->add_option("-o,--out", a->out, "output folder (train.jsonl, README.md, stats.json, curate.json)")->required();
  sub->add_option("--min-speedup", a->criteria.min_speedup, "keep correct turns with at least this speedup over eager")
      ->capture_default_str()->check(number_from(0));
  sub->add_option("-k,--per-task", a->criteria.per_task, "per task, keep this many turns with the shortest reasoning")
      ->capture_default_str()->check(whole_number(1));
  sub->add_option("--single-per-fused", a->single_per_fused,
                  "balance to this many single-operator rows (level 1) per fused row (levels 2, 3); 0: no balancing")
      ->check(number_from(0));
  sub->add_flag("--keep-duplicates", a->keep_duplicates, "keep near-duplicate kernels");
  sub->add_flag("--allow-empty", a->allow_empty, "write the files even when no turn is selected (else exit 7)");
  sub->add_option("--reasoning", a->reasoning, "where the reasoning goes: think (a <think> block) or reasoning_content")
      ->capture_default_str()->check(one_of({"think", "reasoning_content"}));
  sub->add_flag("-q,--quiet", a->quiet, "no summary line, no warnings");
  return Command{sub, [a] {
                   try {
                     return run_curate(*a);
                   } catch (const std::exception& e) {
                     print_error("curate", std::string("internal: ") + e.what());
                     return dataset_exit::kInternal;
                   }
                 }};
}

}  // namespace kagent::cli
