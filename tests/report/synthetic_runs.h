// Synthetic solve runs and collections for the report's tests and benchmark. They are written
// through the real RunStore with real trajectory records, the real feedback template and the
// examples' CUDA sources, so their files have the shape and size of real ones; only the
// verdicts and numbers are drawn at random (seeded: the same options give the same folder).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

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

}  // namespace kagent::report::testing
