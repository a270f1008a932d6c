// Shared by the report's doctest suites: the recorded real run, temp folders, small file edits.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "common/files.h"
#include "synthetic_runs.h"
#include "traj_test_util.h"

namespace kagent::report::testing {

using kagent::testing::TempDir;

// A real `kagent solve` of examples/elementwise_gelu.py with its replay file, on a machine
// without a GPU (tests/report/data/README.md): a compile error, then three turns compiled but not run.
inline std::filesystem::path real_run_fixture() {
  return std::filesystem::path(KAGENT_SOURCE_DIR) / "tests/report/data/gelu_replay_nogpu";
}

// A copy of the real run under `root`, to damage.
inline std::filesystem::path copy_real_run(const std::filesystem::path& root) {
  const auto dst = root / "run";
  std::filesystem::copy(real_run_fixture(), dst, std::filesystem::copy_options::recursive);
  return dst;
}

inline void append_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::app | std::ios::binary) << text;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::trunc | std::ios::binary) << text;
}

inline SynthOptions synth_options(int samples = 2, int turns = 3) {
  SynthOptions o;
  o.samples = samples;
  o.turns = turns;
  o.examples_dir = std::filesystem::path(KAGENT_SOURCE_DIR) / "examples";
  return o;
}

}  // namespace kagent::report::testing
