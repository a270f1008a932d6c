#pragma once

#include "cli/command.h"
#include "cli/solve_command.h"

namespace kagent::cli {

// kagent collect SUITE: problems x samples x turns over a whole suite, resumable and shardable;
// --merge joins shards, --metrics recomputes the numbers of a collection.
Command add_collect_command(CLI::App& app);

// The exit statuses of `kagent collect` (docs/collect.md).
namespace collect_exit {
inline constexpr int kComplete = 0;        // every (problem, sample) recorded (merged, metrics written)
inline constexpr int kUsage = 2;           // bad flags, --shard 3/2, a bad --ids or --match, --merge into a non-empty folder
inline constexpr int kNotFound = 3;        // the suite, a listed problem file or a --resume/--metrics folder does not exist
inline constexpr int kEmptySuite = 4;      // the suite holds no problem files, or none passes the filters
inline constexpr int kLlmConfig = solve_exit::kLlmConfig;  // no API key, unreadable config or replay file, no model
inline constexpr int kLlmFailed = solve_exit::kLlmFailed;  // the model failed (samples stopped, or the run aborted); --resume continues
inline constexpr int kNotACollection = 7;  // --resume/--metrics/--merge of a folder that holds no collection
inline constexpr int kProblemErrors = 8;   // some problems cannot run (listed; the others ran)
inline constexpr int kMixedConfig = 9;     // --merge of runs collected with different settings
inline constexpr int kSampleErrors = 11;   // some samples could not be run or recorded (listed); the others were; --resume retries them
inline constexpr int kInternal = 14;
inline constexpr int kNoGpu = 15;          // no CUDA device and no --compile-only: answers were compiled, not run
inline constexpr int kInterrupted = solve_exit::kInterrupted;
}  // namespace collect_exit

}  // namespace kagent::cli
