// `kagent report` as a user runs it: the page written, and one error line with its own exit
// status for every kind of bad input.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "common/subprocess.h"
#include "report/report_error.h"
#include "report_test_util.h"

using namespace kagent;
using namespace kagent::report;
using namespace kagent::report::testing;

namespace {
RunResult run_report(std::vector<std::string> args) {
  SpawnOptions o;
  o.argv = {std::string(KAGENT_BINARY_DIR) + "/kagent", "report"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  return run_command(o, std::chrono::seconds(60));
}

// Exactly one line, starting with the command's error prefix.
void check_error_line(const RunResult& r, int status) {
  CHECK(r.exit.exited);
  CHECK(r.exit.code == status);
  CHECK(r.output.rfind("kagent report: error: ", 0) == 0);
  CHECK(r.output.find('\n') == r.output.size() - 1);
}
}  // namespace

TEST_CASE("kagent report RUN writes RUN/report.html, or --out, and prints the path") {
  TempDir tmp;
  const auto run = copy_real_run(tmp.path());
  RunResult r = run_report({run.string()});
  CHECK(r.exit.code == report_exit::kWritten);
  CHECK(r.output == (run / "report.html").string() + "\n");
  CHECK(std::filesystem::file_size(run / "report.html") > 50000);
  r = run_report({run.string(), "--out", (tmp.path() / "page.html").string()});
  CHECK(r.exit.code == 0);
  CHECK(std::filesystem::exists(tmp.path() / "page.html"));
}

TEST_CASE("bad input: one error line and a distinct exit status, never a crash") {
  TempDir tmp;
  check_error_line(run_report({(tmp.path() / "missing").string()}), report_exit::kNotFound);
  check_error_line(run_report({tmp.path().string()}), report_exit::kNotARun);  // a folder that is no run
  write_text(tmp.path() / "file.txt", "x");
  check_error_line(run_report({(tmp.path() / "file.txt").string()}), report_exit::kNotARun);
  const auto run = copy_real_run(tmp.path());
  write_text(run / "config.json", "{");
  check_error_line(run_report({run.string()}), report_exit::kUnreadable);
  const auto good = tmp.path() / "good";
  std::filesystem::copy(real_run_fixture(), good, std::filesystem::copy_options::recursive);
  check_error_line(run_report({good.string(), "--out", (tmp.path() / "no/such/dir/page.html").string()}), report_exit::kWriteFailed);
  const RunResult usage = run_report({});
  CHECK(usage.exit.code == report_exit::kUsage);
}

TEST_CASE("a run with a torn last line and a run in progress each give a page") {
  TempDir tmp;
  const auto run = copy_real_run(tmp.path());
  append_text(run / "trajectories.jsonl", R"({"sample": 1, "tur)");
  RunResult r = run_report({run.string()});
  CHECK(r.exit.code == 0);
  CHECK(read_file(run / "report.html").find("the last line is torn") != std::string::npos);
  write_synthetic_run(tmp.path() / "running", "p", 1, synth_options(2, 4), 1);
  r = run_report({(tmp.path() / "running").string()});
  CHECK(r.exit.code == 0);
  CHECK(read_file(tmp.path() / "running" / "report.html").find("\"status\":\"running\"") != std::string::npos);
}
