#include <doctest/doctest.h>

#include "report/report_error.h"
#include "report/run_records.h"
#include "report_test_util.h"

using namespace kagent;
using namespace kagent::report;
using namespace kagent::report::testing;

TEST_CASE("the real run reads whole: one sample, its four turns and their verdicts") {
  const RunRecords r = read_run_records(real_run_fixture(), Detail::Full);
  CHECK(r.warnings.empty());
  REQUIRE(r.samples.size() == 1);
  const auto& t = r.samples[0];
  CHECK(t.status == traj::SampleStatus::Finished);
  REQUIRE(t.turns.size() == 4);
  CHECK(t.turns[0].eval->status == Status::CompileError);
  CHECK(t.turns[1].eval->reason == reason::kNoGpu);
  CHECK_FALSE(t.turns[1].code.empty());
  CHECK_FALSE(t.turns[1].messages.empty());
  CHECK(r.config.value("turns", 0) == 4);
  CHECK(r.summary.is_object());
}

TEST_CASE("compact reading keeps verdicts and numbers, drops the bulky text") {
  const RunRecords r = read_run_records(real_run_fixture(), Detail::Compact);
  REQUIRE(r.samples.size() == 1);
  const auto& turn = r.samples[0].turns[0];
  CHECK(turn.messages.empty());
  CHECK(turn.code.empty());
  CHECK(turn.feedback.empty());
  CHECK(turn.eval->status == Status::CompileError);
  CHECK(turn.eval->message == "nvcc failed");
  CHECK(turn.eval->compile->log.empty());
  CHECK(turn.tokens.total() > 0);
}

TEST_CASE("a torn last line is left out with a warning; the finished lines stay") {
  TempDir tmp;
  const auto run = copy_real_run(tmp.path());
  append_text(run / "trajectories.jsonl", R"({"sample": 1, "turns": [{"index": 0, "code": "__glo)");
  const RunRecords r = read_run_records(run, Detail::Full);
  REQUIRE(r.samples.size() == 1);
  CHECK(r.samples[0].turns.size() == 4);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("torn") != std::string::npos);
}

TEST_CASE("an unreadable line in the middle is a warning naming its line") {
  TempDir tmp;
  const auto run = copy_real_run(tmp.path());
  const std::string good = kagent::read_file(run / "trajectories.jsonl");
  write_text(run / "trajectories.jsonl", "{not json}\n" + good);
  const RunRecords r = read_run_records(run, Detail::Full);
  CHECK(r.samples.size() == 1);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("line 1") != std::string::npos);
}

TEST_CASE("a run in progress: finished samples from the lines, the others from partial/") {
  TempDir tmp;
  write_synthetic_run(tmp.path() / "run", "p", 1, synth_options(3, 4), 1);
  const RunRecords r = read_run_records(tmp.path() / "run", Detail::Full);
  REQUIRE(r.samples.size() == 3);
  CHECK(r.samples[0].done());
  CHECK(r.samples[1].done());
  CHECK(r.samples[2].status == traj::SampleStatus::Running);
  CHECK(r.samples[2].turns.size() == 2);
  CHECK(r.warnings.empty());
}

TEST_CASE("a folder that is no run, or whose config.json is broken, is a ReportError with its status") {
  TempDir tmp;
  auto status_of = [](const std::filesystem::path& p) {
    try {
      read_run_records(p, Detail::Full);
    } catch (const ReportError& e) {
      return e.exit_status();
    }
    return 0;
  };
  CHECK(status_of(tmp.path()) == report_exit::kNotARun);
  const auto run = copy_real_run(tmp.path());
  write_text(run / "config.json", "{\"samples\": ");
  CHECK(status_of(run) == report_exit::kUnreadable);
}
