#include "report/report_writer.h"

#include "build_info.h"
#include "common/files.h"
#include "report/collection_data.h"
#include "report/page_html.h"
#include "report/report_error.h"
#include "report/run_data.h"
#include "report/run_records.h"
#include "trajectory/trajectory.h"

namespace kagent::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kReportFile = "report.html";

}  // namespace

std::string render_report(const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::exists(run_dir, ec)) throw ReportError(report_exit::kNotFound, "no such folder: " + run_dir.string());
  if (!fs::is_directory(run_dir, ec))
    throw ReportError(report_exit::kNotARun, run_dir.string() + " is not a folder (give a run or collection folder)");
  json data = {{"generated_at", traj::now_iso8601()}, {"kagent_version", build::kVersion}};
  std::string title;
  if (is_collection_folder(run_dir)) {
    data["kind"] = "collection";
    data["collection"] = collection_page_data(run_dir);
    title = "kagent collection " + fs::absolute(run_dir).lexically_normal().filename().string();
  } else if (is_run_folder(run_dir)) {
    const RunRecords records = read_run_records(run_dir, Detail::Full);
    data["kind"] = "run";
    data["run"] = run_page_data(run_dir, records, Detail::Full);
    title = "kagent run " + data["run"]["problem"].value("name", std::string()) + " (" + data["run"].value("id", "") + ")";
  } else {
    throw ReportError(report_exit::kNotARun,
                      run_dir.string() +
                          " is not a kagent run (no config.json and trajectories.jsonl) nor a collection (no manifest.json)");
  }
  return render_page(data, title);
}

void write_report(const fs::path& run_dir, const fs::path& out_path) {
  const std::string page = render_report(run_dir);
  try {
    write_file_atomic(out_path, page);
  } catch (const std::exception& e) {
    throw ReportError(report_exit::kWriteFailed, "cannot write " + out_path.string() + ": " + e.what());
  }
}

fs::path default_report_path(const fs::path& run_dir) { return run_dir / kReportFile; }

}  // namespace kagent::report
