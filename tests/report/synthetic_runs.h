// Synthetic solve runs and collections for the report's tests and benchmark. They are written
// through the real RunStore with real trajectory records, the real feedback template and the
// examples' CUDA sources, so their files have the shape and size of real ones; only the
// verdicts and numbers are drawn at random (seeded: the same options give the same folder).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "result/eval_result.h"

namespace kagent::report::testing {

struct SynthOptions {
  int samples = 4;
  int turns = 4;
  uint32_t seed = 1;
  // The examples' .cu files are the turns' code; their .py files the problems' sources.
  std::filesystem::path examples_dir;
};

// One finished solve run at `dir` (created), `running` samples left in progress (partial/ only).
void write_synthetic_run(const std::filesystem::path& dir, const std::string& problem, int level,
                         const SynthOptions& options, int running = 0);

struct CollectionOptions {
  int problems = 100;
  bool metrics = true;           // write metrics.json as `kagent collect` does at the end
  double problem_errors = 0.01;  // share of problems that cannot run
  double running = 0.0;          // share of problems with a sample still in progress
};

// A collection folder in the format of docs/collection_format.md.
void write_synthetic_collection(const std::filesystem::path& dir, const SynthOptions& options,
                                const CollectionOptions& collection);

// One turn of a hand-made collection, for checks of exact counts.
struct TurnSpec {
  Status status = Status::Correct;  // before the guards ruled
  std::string guard;                // a guard that reported "reject" (strict's action; kernelbench's by its rule)
  std::optional<double> speedup_eager, speedup_compiled;  // timed against that baseline when set
  bool no_code = false;             // the answer had no code block: no verdict
};

struct ProblemSpec {
  std::string name;
  int level = 1;
  std::vector<std::vector<TurnSpec>> samples;  // each sample's turns
};

// A small collection with exactly these turns, its verdicts given under `policy` (the
// collection's --policy) through the real apply_policies; `metrics`: metrics.json written as
// `kagent collect` writes it (computed_by "kagent collect").
void write_collection_of(const std::filesystem::path& dir, const std::vector<ProblemSpec>& problems,
                         const std::string& policy, bool metrics);

// Four problems whose verdicts differ by policy, nothing timed against torch.compile:
//   L1_1_flagged    compile_error, then correct 2.0x over eager with library_share found (kernelbench
//                   flags it: solved; strict rejects it: unsolved)
//   L1_2_no_kernel  correct with no_kernel found (rejected under both)
//   L1_3_no_build   compile_error, then an answer without code
//   L2_4_solved     sample 0: wrong, then correct 1.5x; sample 1: runtime_error, then timeout
std::vector<ProblemSpec> verdict_mix_problems();

}  // namespace kagent::report::testing
