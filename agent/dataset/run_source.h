// The finished trajectories of the runs a dataset command is given: `kagent solve` run folders
// and `kagent collect` collection folders (every problems/<name>/ run in them), read without
// changing them. Samples still in progress are left out; unreadable lines become warnings.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trajectory/trajectory.h"

namespace kagent::dataset {

struct SourceTrajectory {
  std::string run;              // the solve run folder it came from
  traj::Trajectory trajectory;
  std::string format = "cuda";  // the answer format the run asked for: "cuda" | "kernelbench"
};

struct SourceRuns {
  std::vector<SourceTrajectory> trajectories;  // in the order given, samples by index
  std::vector<std::string> sources;            // the paths given, as given
  nlohmann::json versions;                     // kagent/torch/cuda/gpu of the first source that names them
  std::vector<std::string> warnings;
};

// A collection's problems/<name>/ whose trajectories name another problem while their file is
// <name>.py (written before identical files kept their own names) is read under <name>, with a
// warning.
// Throws report::ReportError, with `kagent report`'s exit status, for a path that does not
// exist (kNotFound), is neither a run nor a collection (kNotARun: a manifest.json of anything
// but a collection too), or whose config.json or manifest.json cannot be read (kUnreadable).
SourceRuns read_runs(const std::vector<std::filesystem::path>& paths);

// The answer format of a run: its config.json's "format", else the first verdict's (runs
// written before the setting), else "cuda" (the only format there was).
std::string run_format(const nlohmann::json& config, const std::vector<traj::Trajectory>& samples);

// The task a trajectory solves: its problem's name (KernelBench file stem).
inline const std::string& task_of(const traj::Trajectory& t) { return t.problem.name; }
// KernelBench level 1 is single-operator; levels 2 and 3 are fused (ConCuR's split).
bool is_single_op(const traj::ProblemInfo& p);

}  // namespace kagent::dataset
