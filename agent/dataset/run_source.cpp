#include "dataset/run_source.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "common/files.h"
#include "report/collection_data.h"
#include "report/report_error.h"
#include "report/run_records.h"

namespace kagent::dataset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A collection's problems/<name>/ whose trajectories name another problem while their file is
// <name>.py: written before identical problem files kept their own names (problem/spec_cache.h),
// when a cached spec lent its name to every file of the same contents. The rows take the
// problem's own name back; the prompt text the model was sent keeps the other one.
void own_name(traj::Trajectory& t, const fs::path& dir, bool in_collection, bool& warned, SourceRuns& out) {
  const std::string folder = dir.filename().string();
  if (!in_collection || t.problem.name == folder || fs::path(t.problem.path).stem().string() != folder) return;
  if (!warned)
    out.warnings.push_back(fmt::format("{}: its trajectories name the problem {}, but its file is {} (a file with the same "
                                       "contents): the rows name it {}",
                                       dir.string(), t.problem.name, t.problem.path, folder));
  warned = true;
  t.problem.name = folder;
}

void add_run(const fs::path& dir, SourceRuns& out, bool in_collection) {
  auto records = report::read_run_records(dir, report::Detail::Full);
  for (auto& w : records.warnings) out.warnings.push_back(dir.string() + ": " + w);
  const std::string format = run_format(records.config, records.samples);
  bool warned = false;
  for (auto& t : records.samples) {
    if (!t.done()) continue;
    own_name(t, dir, in_collection, warned, out);
    if (out.versions.is_null() && !t.versions.kagent.empty()) out.versions = t.versions;
    out.trajectories.push_back({dir.string(), std::move(t), format});
  }
}

}  // namespace

std::string run_format(const json& config, const std::vector<traj::Trajectory>& samples) {
  if (config.is_object() && config.contains("format") && config["format"].is_string()) return config["format"].get<std::string>();
  for (const auto& t : samples)
    for (const auto& turn : t.turns)
      if (turn.eval && !turn.eval->format.empty()) return turn.eval->format;
  return "cuda";
}

bool is_single_op(const traj::ProblemInfo& p) {
  if (p.level) return *p.level == 1;
  return p.op_type == traj::kOpSingle;
}

SourceRuns read_runs(const std::vector<fs::path>& paths) {
  SourceRuns out;
  for (const auto& path : paths) {
    out.sources.push_back(path.string());
    std::error_code ec;
    if (!fs::exists(path, ec)) throw report::ReportError(report::report_exit::kNotFound, "no such folder: " + path.string());
    if (report::is_run_folder(path)) {
      add_run(path, out, /*in_collection=*/false);
    } else if (report::is_collection_folder(path)) {
      const json manifest = report::read_collection_manifest(path);  // a manifest.json of something else is refused
      if (manifest.contains("versions") && manifest["versions"].is_object()) out.versions = manifest["versions"];
      std::vector<fs::path> runs;
      if (fs::is_directory(path / "problems"))
        for (const auto& e : fs::directory_iterator(path / "problems"))
          if (report::is_run_folder(e.path())) runs.push_back(e.path());
      std::sort(runs.begin(), runs.end());
      for (const auto& r : runs) add_run(r, out, /*in_collection=*/true);
    } else {
      throw report::ReportError(report::report_exit::kNotARun,
                                path.string() + " is neither a kagent run folder (config.json, trajectories.jsonl) nor a "
                                                "collection (manifest.json)");
    }
  }
  return out;
}

}  // namespace kagent::dataset
