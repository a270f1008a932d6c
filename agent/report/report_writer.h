// `kagent report`'s entry points, also called by `kagent solve --report` and `kagent collect`:
// what a folder is, the page for it, and where the page goes by default.
#pragma once

#include <filesystem>
#include <string>

namespace kagent::report {

// The page for a solve run folder or a collection folder. Throws ReportError.
std::string render_report(const std::filesystem::path& run_dir);

// Writes the page for `run_dir` to `out_path` atomically (the folders must exist).
// Throws ReportError: its exit_status() and what() are the command's status and error line.
void write_report(const std::filesystem::path& run_dir, const std::filesystem::path& out_path);

// Where the page goes when no --out is given: report.html inside the run folder.
std::filesystem::path default_report_path(const std::filesystem::path& run_dir);

}  // namespace kagent::report
