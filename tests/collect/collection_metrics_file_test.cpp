// The metrics of a small fixed collection against values computed by hand, and the same
// numbers from `kagent report`'s reading of the folder (one implementation for both).
#include <doctest/doctest.h>

#include <cmath>

#include "collect/collection_metrics_file.h"
#include "common/files.h"
#include "collection_builder.h"
#include "report/collection_data.h"
#include "temp_dir.h"

using namespace kagent;
using namespace kagent::collect::testing;
using kagent::testing::TempDir;
using nlohmann::json;

namespace {

constexpr Status OK = Status::Correct, WRONG = Status::Wrong, COMPILE = Status::CompileError;

// Level 1: a (2.0x/1.2x at turn 2 after a wrong turn; wrong, wrong), b (0.5x/0.4x at turn 1;
// 0.9x/0.7x then 1.6x/1.1x). Level 2: c (3.0x/2.5x at turn 1; compile, compile), d cannot run.
std::vector<ProblemSpecOfTest> fixed_problems() {
  return {
      {"a", 1, {trajectory("a", 1, 0, {{WRONG}, {OK, 2.0, 1.2}}), trajectory("a", 1, 1, {{WRONG}, {WRONG}})}, ""},
      {"b", 1, {trajectory("b", 1, 0, {{OK, 0.5, 0.4}, {WRONG}}), trajectory("b", 1, 1, {{OK, 0.9, 0.7}, {OK, 1.6, 1.1}})}, ""},
      {"c", 2, {trajectory("c", 2, 0, {{OK, 3.0, 2.5}, {WRONG}}), trajectory("c", 2, 1, {{COMPILE}, {COMPILE}})}, ""},
      {"d", 2, {}, "problem_load_error: SyntaxError"},
  };
}

const json& group(const json& m, const std::string& level) {
  for (const auto& g : m["groups"])
    if (g["level"] == level) return g;
  FAIL("no group " << level);
  static json none;
  return none;
}

void check_fast_p(const json& fp, std::initializer_list<double> want) {
  const char* keys[] = {"0", "0.5", "0.8", "1.0", "1.5", "2.0"};
  size_t i = 0;
  for (double w : want) {
    INFO("fast_" << keys[i]);
    CHECK(fp[keys[i++]].get<double>() == doctest::Approx(w));
  }
}

}  // namespace

TEST_CASE("metrics of a fixed collection equal the hand-computed values") {
  TempDir dir("kagent-metrics-fixed");
  build_collection(dir.path(), fixed_problems(), 2, 2);
  const json m = collect::collection_metrics(dir.path(), "test");
  CHECK(m["samples_per_problem"] == 2);
  CHECK(m["turns"] == 2);

  const json& l1 = group(m, "1");
  CHECK(l1["problems"] == 2);
  CHECK(l1["samples"] == 4);
  CHECK(l1["correct_rate"].get<double>() == doctest::Approx(0.75));
  // Sample speedups (best correct turn): eager 2.0, 0.5, 1.6; compiled 1.2, 0.4, 1.1; fast_p is strict (> p).
  check_fast_p(l1["fast_p"]["eager"], {0.75, 0.5, 0.5, 0.5, 0.5, 0.0});
  check_fast_p(l1["fast_p"]["compiled"], {0.75, 0.5, 0.5, 0.5, 0.0, 0.0});
  CHECK(l1["geomean_speedup"]["eager"].get<double>() == doctest::Approx(std::cbrt(2.0 * 0.5 * 1.6)));
  CHECK(l1["geomean_speedup"]["compiled"].get<double>() == doctest::Approx(std::cbrt(1.2 * 0.4 * 1.1)));
  // pass@k: a has 1 of 2 correct (0.5 at k=1), b 2 of 2.
  CHECK(l1["pass_at_k"]["1"].get<double>() == doctest::Approx(0.75));
  CHECK(l1["pass_at_k"]["2"].get<double>() == doctest::Approx(1.0));
  CHECK(l1["fast1_at_k"]["eager"]["1"].get<double>() == doctest::Approx(0.5));
  CHECK(l1["fast1_at_k"]["eager"]["2"].get<double>() == doctest::Approx(1.0));
  CHECK(l1["fast1_by_turn"]["eager"] == json({0.0, 0.5}));  // both fast turns are second turns
  CHECK(l1["cost"]["tokens_per_problem"].get<double>() == doctest::Approx(600));  // 2 samples x 2 turns x 150
  CHECK(l1["cost"]["gpu_seconds_per_problem"].get<double>() == doctest::Approx(2.0));  // 4 evaluations x 0.5 s

  // Level 2: d cannot run and counts as two failed samples.
  const json& l2 = group(m, "2");
  CHECK(l2["problems"] == 2);
  CHECK(l2["samples"] == 4);
  CHECK(l2["correct_rate"].get<double>() == doctest::Approx(0.25));
  check_fast_p(l2["fast_p"]["eager"], {0.25, 0.25, 0.25, 0.25, 0.25, 0.25});
  check_fast_p(l2["fast_p"]["compiled"], {0.25, 0.25, 0.25, 0.25, 0.25, 0.25});
  CHECK(l2["geomean_speedup"]["eager"].get<double>() == doctest::Approx(3.0));
  CHECK(l2["pass_at_k"]["1"].get<double>() == doctest::Approx(0.25));  // (0.5 + 0) / 2
  CHECK(l2["pass_at_k"]["2"].get<double>() == doctest::Approx(0.5));
  CHECK(l2["fast1_by_turn"]["compiled"] == json({0.25, 0.25}));

  const json& all = group(m, "all");
  CHECK(all["problems"] == 4);
  CHECK(all["samples"] == 8);
  CHECK(all["correct_rate"].get<double>() == doctest::Approx(0.5));
  check_fast_p(all["fast_p"]["eager"], {0.5, 3.0 / 8, 3.0 / 8, 3.0 / 8, 3.0 / 8, 1.0 / 8});
  CHECK(all["geomean_speedup"]["eager"].get<double>() == doctest::Approx(std::pow(2.0 * 0.5 * 1.6 * 3.0, 0.25)));
  CHECK(all["pass_at_k"]["1"].get<double>() == doctest::Approx((0.5 + 1.0 + 0.5 + 0.0) / 4));
  CHECK(all["fast1_at_k"]["eager"]["2"].get<double>() == doctest::Approx((1.0 + 1.0 + 1.0 + 0.0) / 4));
}

TEST_CASE("kagent report computes the same numbers from the same folder") {
  TempDir dir("kagent-metrics-report");
  build_collection(dir.path(), fixed_problems(), 2, 2);
  json ours = collect::collection_metrics(dir.path(), "test");
  json page = report::collection_page_data(dir.path());  // no metrics.json: the report computes them
  json theirs = page["metrics"];
  for (json* j : {&ours, &theirs}) {
    j->erase("generated_at");
    j->erase("computed_by");
  }
  CHECK(ours == theirs);

  // Once written, the report shows metrics.json as it is.
  const json written = collect::write_collection_metrics(dir.path(), "kagent collect");
  CHECK(report::collection_page_data(dir.path())["metrics"] == written);
}

// A candidate whose outputs hold NaN gives NaN errors and mismatches; nlohmann writes a NaN as
// null. Read back by json.value(key, 0.0) that null threw "type must be number, but is null":
// the record was dropped on resume and from the metrics, and a live collection ended (exit 14).
TEST_CASE("a record with a null where a number is expected: read back, counted, resumed") {
  const double nan = std::nan("");
  traj::Trajectory odd = trajectory("a", 1, 1, {{WRONG}, {OK, 1.5, 1.1}});
  {
    EvalResult& r = *odd.turns[0].eval;
    Correctness c;
    c.trials = 5;
    c.max_abs_error = nan;
    c.max_rel_error = nan;
    OutputCheck first;
    first.ok = false;
    first.max_abs_error = nan;
    first.samples = {{{3}, nan, 1.0}};
    c.first_failure = first;
    r.correctness = c;
    CompileInfo compile;
    compile.ok = true;
    compile.steps = {{"nvcc", nan, nan}};
    r.compile = compile;
    TimingStats candidate;
    candidate.median_ms = 0.5;
    candidate.stdev_ms = nan;
    odd.turns[1].eval->timing->candidate = candidate;
  }
  TempDir dir("kagent-null-records");
  build_collection(dir.path(), {{"a", 1, {trajectory("a", 1, 0, {{OK, 2.0, 1.2}}), odd}, ""}}, 2, 2);
  const std::string lines = kagent::read_file(dir.path() / "problems/a/trajectories.jsonl");
  REQUIRE(lines.find("\"max_abs_error\":null") != std::string::npos);  // what the test is about

  // The resume path: the run folder's records, as --resume reads them.
  const traj::ResumeState st = traj::RunStore::scan(dir.path() / "problems/a");
  CHECK(st.warnings.empty());
  REQUIRE(st.finished.count(1));
  const EvalResult& back = *st.finished.at(1).turns[0].eval;
  CHECK(std::isnan(back.correctness->max_abs_error));  // not a number stays not a number, never 0
  CHECK(std::isnan(back.correctness->first_failure->samples.at(0).got));
  CHECK(back.correctness->first_failure->samples.at(0).expected == 1.0);
  CHECK(st.finished.at(1).turns[1].eval->timing->candidate->median_ms == 0.5);
  CHECK_NOTHROW(traj::RunStore::open(dir.path() / "problems/a"));

  // The metrics and the report count both samples (b's second is the correct 1.5x).
  const collect::CollectionOutcomes o = collect::read_collection_outcomes(dir.path());
  CHECK(o.warnings.empty());
  const json m = collect::collection_metrics(dir.path(), "test");
  CHECK(group(m, "1")["samples"] == 2);
  CHECK(group(m, "1")["correct_rate"].get<double>() == doctest::Approx(1.0));
  json page;
  CHECK_NOTHROW(page = report::collection_page_data(dir.path()));
  CHECK(page["metrics"]["groups"] == m["groups"]);
}
