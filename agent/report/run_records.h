// The records of one `kagent solve` run folder as the report reads them, without changing
// the folder: finished samples from trajectories.jsonl, samples in progress from partial/.
// A torn last line, an unreadable line or partial file, a missing summary become warnings
// for the page; only a folder that is no run (or whose config.json is unreadable) throws.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trajectory/trajectory.h"

namespace kagent::report {

// Full: every turn whole. Compact: the turns' verdicts, numbers and messages, without the
// bulky text (messages sent, reasoning, answer, code, feedback, profile, compiler log), for
// the many problems of a collection.
enum class Detail { Full, Compact };

struct RunRecords {
  nlohmann::json config;                   // config.json
  nlohmann::json summary;                  // summary.json, null when absent or unreadable
  std::vector<traj::Trajectory> samples;   // by sample index; a sample in progress has status Running
  std::vector<std::string> warnings;
};

// A solve run folder: config.json and trajectories.jsonl.
bool is_run_folder(const std::filesystem::path& dir);

// Throws ReportError (not a run, config.json unreadable).
RunRecords read_run_records(const std::filesystem::path& dir, Detail detail);

}  // namespace kagent::report
