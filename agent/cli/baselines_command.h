#pragma once

#include "cli/command.h"

namespace kagent::cli {

// kagent baselines SUITE: eager and torch.compile times of every problem, once per GPU model and
// torch version (JSON and CSV), and the suite's validation (every problem loads and fits the GPU).
Command add_baselines_command(CLI::App& app);

// The exit statuses of `kagent baselines` (docs/collect.md).
namespace baselines_exit {
inline constexpr int kMeasured = 0;        // every problem loads, fits and was timed on an idle GPU
inline constexpr int kUsage = 2;
inline constexpr int kNotFound = 3;        // the suite or a listed problem file does not exist
inline constexpr int kEmptySuite = 4;      // no problem files, or none passes the filters
inline constexpr int kProblemErrors = 8;   // some problems cannot run (listed with the reason; the others were timed)
inline constexpr int kShared = 10;         // some times were taken while another process used the GPU (not trusted, not cached)
inline constexpr int kInternal = 14;
inline constexpr int kNoGpu = 15;          // no CUDA device: the problems were loaded and checked, nothing was timed
}  // namespace baselines_exit

}  // namespace kagent::cli
