#include "dataset/run_source.h"

#include <algorithm>
#include <stdexcept>

#include "common/files.h"
#include "report/collection_data.h"
#include "report/report_error.h"
#include "report/run_records.h"

namespace kagent::dataset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void add_run(const fs::path& dir, SourceRuns& out) {
  auto records = report::read_run_records(dir, report::Detail::Full);
  for (auto& w : records.warnings) out.warnings.push_back(dir.string() + ": " + w);
  for (auto& t : records.samples) {
    if (!t.done()) continue;
    if (out.versions.is_null() && !t.versions.kagent.empty()) out.versions = t.versions;
    out.trajectories.push_back({dir.string(), std::move(t)});
  }
}

}  // namespace

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
      add_run(path, out);
    } else if (report::is_collection_folder(path)) {
      const json manifest = report::read_collection_manifest(path);  // a manifest.json of something else is refused
      if (manifest.contains("versions") && manifest["versions"].is_object()) out.versions = manifest["versions"];
      std::vector<fs::path> runs;
      if (fs::is_directory(path / "problems"))
        for (const auto& e : fs::directory_iterator(path / "problems"))
          if (report::is_run_folder(e.path())) runs.push_back(e.path());
      std::sort(runs.begin(), runs.end());
      for (const auto& r : runs) add_run(r, out);
    } else {
      throw report::ReportError(report::report_exit::kNotARun,
                                path.string() + " is neither a kagent run folder (config.json, trajectories.jsonl) nor a "
                                                "collection (manifest.json)");
    }
  }
  return out;
}

}  // namespace kagent::dataset
