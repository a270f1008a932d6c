#include "dataset/run_source.h"

#include <algorithm>
#include <stdexcept>

#include "common/files.h"
#include "report/collection_data.h"
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
    if (report::is_run_folder(path)) {
      add_run(path, out);
    } else if (report::is_collection_folder(path)) {
      try {
        const json manifest = json::parse(read_file(path / "manifest.json"));
        if (manifest.contains("versions") && manifest["versions"].is_object()) out.versions = manifest["versions"];
      } catch (const std::exception& e) {
        out.warnings.push_back(path.string() + "/manifest.json: " + e.what());
      }
      std::vector<fs::path> runs;
      if (fs::is_directory(path / "problems"))
        for (const auto& e : fs::directory_iterator(path / "problems"))
          if (report::is_run_folder(e.path())) runs.push_back(e.path());
      std::sort(runs.begin(), runs.end());
      for (const auto& r : runs) add_run(r, out);
    } else {
      throw std::invalid_argument(path.string() + " is neither a kagent run folder nor a collection");
    }
  }
  return out;
}

}  // namespace kagent::dataset
