#include <doctest/doctest.h>

#include "report/run_data.h"
#include "report_test_util.h"

using namespace kagent;
using namespace kagent::report;
using namespace kagent::report::testing;

TEST_CASE("run page data of the real run: grid verdicts, code for the diff, no best, finished") {
  const auto dir = real_run_fixture();
  const auto d = run_page_data(dir, read_run_records(dir, Detail::Full), Detail::Full);
  CHECK(d["problem"]["name"] == "elementwise_gelu");
  CHECK(d["finished"] == true);
  CHECK(d["best"].is_null());
  REQUIRE(d["samples"].size() == 1);
  const auto& turns = d["samples"][0]["turns"];
  REQUIRE(turns.size() == 4);
  CHECK(turns[0]["verdict"] == "compile_error");
  CHECK(turns[1]["verdict"] == "no_gpu");
  CHECK(turns[0]["eval"]["compile"]["errors"].get<std::string>().find("error") != std::string::npos);
  CHECK(turns[0]["code"] != turns[1]["code"]);
  CHECK_FALSE(turns[1]["feedback"].get<std::string>().empty());
  CHECK(d["prompt"]["system"].get<std::string>().size() > 100);
  CHECK_FALSE(turns[0]["eval"].contains("device"));
}

TEST_CASE("run page data: the best turn, baselines and a sample in progress") {
  TempDir tmp;
  write_synthetic_run(tmp.path() / "run", "p", 1, synth_options(3, 4), 1);
  const auto d = run_page_data(tmp.path() / "run", read_run_records(tmp.path() / "run", Detail::Full), Detail::Full);
  CHECK(d["finished"] == false);
  CHECK(d["samples_running"] == 1);
  CHECK(d["samples_finished"] == 2);
  if (!d["best"].is_null()) {
    const int s = d["best"]["sample"], t = d["best"]["turn"];
    CHECK(d["samples"][s]["turns"][t]["verdict"] == "correct");
    CHECK(d["best"]["code"].get<std::string>().size() > 100);
    CHECK(d["baselines"]["eager"]["median_ms"].get<double>() > 0);
  }
  const auto compact = run_page_data(tmp.path() / "run", read_run_records(tmp.path() / "run", Detail::Compact), Detail::Compact);
  CHECK_FALSE(compact["samples"][0]["turns"][0].contains("code"));
  CHECK(compact["samples"][0]["turns"][0].contains("verdict"));
  CHECK(compact.dump().size() * 5 < d.dump().size());
}

TEST_CASE("turn verdicts name why a turn has no evaluation") {
  traj::Turn t;
  CHECK(turn_verdict(t) == "unknown");
  t.error = traj::TurnError{traj::turn_error::kFormat, "no code"};
  CHECK(turn_verdict(t) == "format");
  t.error.reset();
  EvalResult r;
  r.status = Status::Rejected;
  t.eval = r;
  CHECK(turn_verdict(t) == "rejected");
}
