#include "report/run_records.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "common/files.h"
#include "report/json_lines_file.h"
#include "report/json_skim.h"
#include "report/report_error.h"
#include "trajectory/run_store.h"

namespace kagent::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Keys of a turn (and of its evaluation) that compact reading drops before parsing: they hold
// nearly all of a trajectory's bytes and none of the numbers a collection page shows.
const std::set<std::string_view> kBulkyKeys = {"messages", "reasoning", "answer",  "code",    "feedback",
                                               "extra",    "profile",   "log",     "command", "worker_log_tail"};

json parse_record(std::string_view text, Detail detail) {
  if (detail == Detail::Full) return json::parse(text);
  // A turn's keys sit at depth 3 (line object > turns array > turn object); deeper ones are
  // inside its evaluation. Top-level keys (depth 1) are always kept.
  return json::parse(skim_json(text, kBulkyKeys, 3));
}

// partial/sample-<i>.json -> i, or -1.
int partial_index(const std::string& name) {
  static constexpr std::string_view pre = "sample-", post = ".json";
  if (name.size() <= pre.size() + post.size() || name.rfind(pre, 0) != 0 || !name.ends_with(post)) return -1;
  const std::string digits = name.substr(pre.size(), name.size() - pre.size() - post.size());
  if (digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(digits);
}

void read_lines(const fs::path& file, Detail detail, std::map<int, traj::Trajectory>& out,
                std::vector<std::string>& warnings) {
  read_json_lines(file, warnings, [&](std::string_view line, size_t lineno) {
    traj::Trajectory t = parse_record(line, detail).get<traj::Trajectory>();
    if (out.count(t.sample)) {
      warnings.push_back(std::string(traj::kTrajectoriesFile) + " line " + std::to_string(lineno) + ": sample " +
                         std::to_string(t.sample) + " recorded twice; the first line is shown");
      return;
    }
    const int s = t.sample;
    out.emplace(s, std::move(t));
  });
}

void read_partials(const fs::path& dir, Detail detail, const std::map<int, traj::Trajectory>& finished,
                   std::map<int, traj::Trajectory>& out, std::vector<std::string>& warnings) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return;
  for (; it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const int i = partial_index(name);
    if (i < 0 || finished.count(i)) continue;  // a partial left behind by a finished sample
    try {
      traj::Trajectory t = parse_record(read_file(it->path()), detail).get<traj::Trajectory>();
      if (t.sample != i) throw std::runtime_error("it holds sample " + std::to_string(t.sample));
      t.status = traj::SampleStatus::Running;
      out.emplace(i, std::move(t));
    } catch (const std::exception& e) {
      warnings.push_back(std::string(traj::kPartialDir) + "/" + name + " unreadable: " + e.what());
    }
  }
}

}  // namespace

bool is_run_folder(const fs::path& dir) {
  return fs::is_regular_file(dir / traj::kConfigFile) && fs::is_regular_file(dir / traj::kTrajectoriesFile);
}

RunRecords read_run_records(const fs::path& dir, Detail detail) {
  if (!is_run_folder(dir))
    throw ReportError(report_exit::kNotARun, dir.string() + " is not a kagent run (no config.json and trajectories.jsonl)");
  RunRecords r;
  try {
    r.config = json::parse(read_file(dir / traj::kConfigFile));
  } catch (const std::exception& e) {
    throw ReportError(report_exit::kUnreadable, (dir / traj::kConfigFile).string() + " is unreadable: " + e.what());
  }
  if (!r.config.is_object())
    throw ReportError(report_exit::kUnreadable, (dir / traj::kConfigFile).string() + " is not a JSON object");
  std::map<int, traj::Trajectory> finished, running;
  read_lines(dir / traj::kTrajectoriesFile, detail, finished, r.warnings);
  read_partials(dir / traj::kPartialDir, detail, finished, running, r.warnings);
  finished.merge(running);
  for (auto& [i, t] : finished) r.samples.push_back(std::move(t));
  if (fs::exists(dir / traj::kSummaryFile)) {
    try {
      r.summary = json::parse(read_file(dir / traj::kSummaryFile));
    } catch (const std::exception& e) {
      r.warnings.push_back(std::string(traj::kSummaryFile) + " unreadable: " + e.what());
    }
  }
  return r;
}

}  // namespace kagent::report
