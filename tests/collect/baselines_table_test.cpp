// baseline_row: a problem's row of the baseline table from what the worker measured, the
// re-check of a cached time kept beside the cached one; baselines_csv in KernelBench's columns.
#include "collect/baselines_table.h"

#include <doctest/doctest.h>

using namespace kagent;
using nlohmann::json;

namespace {

TimingStats stats(double median_ms, double noise) {
  TimingStats s;
  s.median_ms = median_ms;
  s.rel_stdev = noise;
  return s;
}

const collect::SuiteProblem kProblem{"19_ReLU", "/x/level1/19_ReLU.py", 1, 19, "abc"};

}  // namespace

TEST_CASE("a fresh measurement: its times, no re-check") {
  Timing t;
  t.eager = stats(1.5, 0.01);
  t.compiled = stats(1.2, 0.02);
  t.contention = GpuContention{true, false, {}, std::nullopt, std::nullopt, false, {}};
  const json row = collect::baseline_row(kProblem, t, true);
  CHECK(row["problem"] == "19_ReLU");
  CHECK(row["level"] == 1);
  CHECK(row["eager_ms"] == 1.5);
  CHECK(row["compiled_ms"] == 1.2);
  CHECK(row["cache_hit"] == false);
  CHECK(row["recheck_eager_ms"].is_null());
  CHECK(row["contention"] == "idle");
  CHECK(row["trusted"] == true);
}

TEST_CASE("a cached time: the cached eager in eager_ms, this GPU's re-check beside it") {
  Timing t;
  t.eager = stats(1.5, 0.01);
  t.baseline_cache_hit = true;
  t.baseline_recheck = BaselineRecheck{1.5, 1.53, false};
  const json row = collect::baseline_row(kProblem, t, false);
  CHECK(row["eager_ms"] == 1.5);
  CHECK(row["recheck_eager_ms"] == 1.53);
  CHECK(row["cache_hit"] == true);
  CHECK(row["compiled_error"] == "");
}

TEST_CASE("no timing at all: nulls, not trusted; torch.compile asked and missing is an error") {
  const json row = collect::baseline_row(kProblem, std::nullopt, true);
  CHECK(row["eager_ms"].is_null());
  CHECK(row["recheck_eager_ms"].is_null());
  CHECK(row["trusted"] == false);
  Timing t;
  t.eager = stats(2.0, 0.01);
  CHECK(collect::baseline_row(kProblem, t, true)["compiled_error"] == "torch.compile failed");
}

TEST_CASE("the CSV keeps KernelBench's columns") {
  Timing t;
  t.eager = stats(1.5, 0.01);
  const json table = collect::baselines_table("NVIDIA H200", "2.11.0", {collect::baseline_row(kProblem, t, false)});
  const std::string csv = collect::baselines_csv(table);
  CHECK(csv.rfind("problem,level,eager_ms,eager_noise,compiled_ms,compiled_noise,compiled_error,contention,trusted\n", 0) == 0);
  CHECK(csv.find("19_ReLU,1,1.5,0.01,,,,unknown,true") != std::string::npos);
}
