#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "metrics/collection_metrics.h"
#include "metrics/metrics_table.h"
#include "metrics/sample_outcome.h"
#include "result/policy.h"
#include "trajectory/trajectory.h"

using namespace kagent::metrics;

namespace {

// pass@k by enumerating every k-subset of n samples (c of them passing): the share of
// subsets holding at least one passing sample. The estimator must equal it exactly.
double pass_at_k_brute_force(int n, int c, int k) {
  int subsets = 0, hit = 0;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    ++subsets;
    hit += (mask & ((1u << c) - 1)) != 0;  // samples 0..c-1 pass
  }
  return static_cast<double>(hit) / subsets;
}

}  // namespace

TEST_CASE("pass@k equals brute-force enumeration of k-subsets") {
  for (int n = 1; n <= 12; ++n)
    for (int c = 0; c <= n; ++c)
      for (int k = 1; k <= n; ++k) {
        CAPTURE(n);
        CAPTURE(c);
        CAPTURE(k);
        CHECK(pass_at_k(n, c, k) == doctest::Approx(pass_at_k_brute_force(n, c, k)).epsilon(1e-12));
      }
}

TEST_CASE("pass@k: the unbiased estimator") {
  CHECK(pass_at_k(4, 0, 1) == 0.0);
  CHECK(pass_at_k(4, 1, 1) == doctest::Approx(0.25));
  CHECK(pass_at_k(4, 2, 2) == doctest::Approx(1.0 - 1.0 / 6.0));  // 1 - C(2,2)/C(4,2)
  CHECK(pass_at_k(4, 1, 4) == 1.0);
  CHECK(pass_at_k(10, 3, 5) == doctest::Approx(1.0 - 21.0 / 252.0));  // 1 - C(7,5)/C(10,5)
}

namespace {
SampleOutcomeRow row(const char* problem, const char* level, bool correct, std::optional<double> se,
                     std::optional<double> sc, std::optional<int> fast_turn) {
  SampleOutcomeRow r;
  r.problem = problem;
  r.level = level;
  r.correct = correct;
  r.speedup_eager = se;
  r.speedup_compiled = sc;
  r.fast1_turn_eager = fast_turn;
  r.tokens = 1000;
  r.gpu_seconds = 2;
  return r;
}
}  // namespace

TEST_CASE("metrics by level: correctness, fast_p, geomean, pass@k, fast1 by turn, cost") {
  // Level 1: problem a (2 samples: 2.0x at turn 2, wrong), problem b (0.5x, 1.5x at turn 1).
  // Level 2: problem c (wrong, wrong), and one problem that could not run.
  std::vector<SampleOutcomeRow> rows = {
      row("a", "1", true, 2.0, 1.0, 2), row("a", "1", false, std::nullopt, std::nullopt, std::nullopt),
      row("b", "1", true, 0.5, 0.25, std::nullopt), row("b", "1", true, 1.5, 0.75, 1),
      row("c", "2", false, std::nullopt, std::nullopt, std::nullopt), row("c", "2", false, std::nullopt, std::nullopt, std::nullopt)};
  const auto m = compute_metrics(rows, {"2"}, 2, 3, "test");
  REQUIRE(m["groups"].size() == 3);
  const auto& l1 = m["groups"][0];
  CHECK(l1["level"] == "1");
  CHECK(l1["problems"] == 2);
  CHECK(l1["correct_rate"].get<double>() == doctest::Approx(0.75));
  CHECK(l1["fast_p"]["eager"]["0"].get<double>() == doctest::Approx(0.75));
  CHECK(l1["fast_p"]["eager"]["1.0"].get<double>() == doctest::Approx(0.5));
  CHECK(l1["fast_p"]["eager"]["2.0"].get<double>() == doctest::Approx(0.0));  // strictly faster than p
  CHECK(l1["fast_p"]["compiled"]["0.5"].get<double>() == doctest::Approx(0.5));
  CHECK(l1["geomean_speedup"]["eager"].get<double>() == doctest::Approx(std::cbrt(2.0 * 0.5 * 1.5)));
  CHECK(l1["pass_at_k"]["1"].get<double>() == doctest::Approx((0.5 + 1.0) / 2));
  CHECK(l1["pass_at_k"]["2"].get<double>() == doctest::Approx(1.0));
  CHECK(l1["fast1_at_k"]["eager"]["1"].get<double>() == doctest::Approx(0.5));
  CHECK(l1["fast1_by_turn"]["eager"] == nlohmann::json({0.25, 0.5, 0.5}));
  CHECK(l1["cost"]["tokens_per_problem"].get<double>() == doctest::Approx(2000));
  // The problem that could not run counts as two failed samples of level 2.
  const auto& l2 = m["groups"][1];
  CHECK(l2["problems"] == 2);
  CHECK(l2["samples"] == 4);
  CHECK(l2["correct_rate"] == 0.0);
  CHECK(l2["geomean_speedup"]["eager"].is_null());
  const auto& all = m["groups"][2];
  CHECK(all["level"] == "all");
  CHECK(all["samples"] == 8);
  CHECK(all["correct_rate"].get<double>() == doctest::Approx(3.0 / 8));
  CHECK(all["pass_at_k"]["1"].get<double>() == doctest::Approx(1.5 / 4));
}

TEST_CASE("the table and the CSV carry every metric, k in numeric order") {
  std::vector<SampleOutcomeRow> rows;
  for (int s = 0; s < 16; ++s) {
    SampleOutcomeRow r;
    r.problem.assign(1, 'p');  // not `= "p"`: GCC 12 reports a false -Wrestrict on that
    r.level.assign(1, '1');
    r.correct = s < 4;
    if (r.correct) r.speedup_eager = 1.5, r.speedup_compiled = 0.9, r.fast1_turn_eager = 1;
    rows.push_back(r);
  }
  const auto m = compute_metrics(rows, {}, 16, 2, "test");
  const std::string table = render_metrics_table(m);
  CHECK(table.find("pass@1 ") != std::string::npos);
  CHECK(table.find("pass@2 ") < table.find("pass@16"));  // numeric, not string, order
  CHECK(table.find("fast_1.5") != std::string::npos);
  CHECK(table.find("vs torch.compile") != std::string::npos);
  CHECK(table.find("fast_1 by turn 2") != std::string::npos);
  const std::string csv = metrics_csv(m);
  CHECK(csv.rfind("policy,level,baseline,problems,samples,correct_rate,fast_0,fast_0.5", 0) == 0);
  CHECK(csv.find("pass@2,pass@4,pass@8,pass@16,fast1@1") != std::string::npos);
  // Two levels-rows ("1" and "all") x two baselines.
  int lines = 0;
  for (char ch : csv) lines += ch == '\n';
  CHECK(lines == 5);
  CHECK(csv.find("\n,1,eager,1,16,0.25,0.25,0.25,0.25,0.25,0,0,1.5,") != std::string::npos);
}

TEST_CASE("A sample's outcome under each policy: a library GEMM counts under kernelbench, not under strict") {
  using namespace kagent;
  traj::Trajectory t;
  traj::Turn turn;
  EvalResult r;
  r.status = Status::Correct;
  r.message = "correct in 5 trials";
  r.guards = {{"library_share", kGuardReject, "own kernels took 8% of the GPU time"}};
  Timing timing;
  timing.speedup_eager = 1.4;
  r.timing = timing;
  apply_policies(r, Policy::KernelBench);
  turn.eval = r;
  t.turns.push_back(turn);
  const auto kb = outcome_row("p", "2", t, 1.0, Policy::KernelBench);
  const auto strict = outcome_row("p", "2", t, 1.0, Policy::Strict);
  const auto own = outcome_row("p", "2", t, 1.0);  // the verdict the turn was given: kernelbench's
  CHECK(kb.correct);
  CHECK(kb.speedup_eager == doctest::Approx(1.4));
  CHECK_FALSE(strict.correct);
  CHECK_FALSE(strict.speedup_eager.has_value());
  CHECK(own.correct);
  const auto m_kb = compute_metrics({kb}, {}, 1, 1, "test");
  const auto m_strict = compute_metrics({strict}, {}, 1, 1, "test");
  CHECK(m_kb["groups"].back()["fast_p"]["eager"]["1.0"] == doctest::Approx(1.0));
  CHECK(m_strict["groups"].back()["fast_p"]["eager"]["1.0"] == doctest::Approx(0.0));
}

TEST_CASE("The table and the CSV show every policy's numbers") {
  using nlohmann::json;
  SampleOutcomeRow a;
  a.problem.assign(1, 'p');
  a.level.assign(1, '1');
  a.correct = true;
  a.speedup_eager = 2.0;
  SampleOutcomeRow b = a;
  b.correct = false;
  b.speedup_eager.reset();
  json m = compute_metrics({a}, {}, 1, 1, "test");
  m["policy"] = "kernelbench";
  m["policies"] = {{"kernelbench", m["groups"]}, {"strict", compute_metrics({b}, {}, 1, 1, "test")["groups"]}};
  const std::string table = render_metrics_table(m);
  CHECK(table.find("by policy (the table above: kernelbench)") != std::string::npos);
  CHECK(table.find("strict correct") != std::string::npos);
  CHECK(table.find("kernelbench geomean") != std::string::npos);
  const std::string csv = metrics_csv(m);
  CHECK(csv.find("\nkernelbench,1,eager,1,1,1,") != std::string::npos);
  CHECK(csv.find("\nstrict,1,eager,1,1,0,") != std::string::npos);
}

// metrics.json read back (kagent collect --merge prints it, kagent report shows it): a null
// where a number or a word is expected (a NaN written as null, a hand-edited file) shows as
// "-" or nothing, never nlohmann's "type must be number, but is null".
TEST_CASE("the table and the CSV of a metrics.json holding nulls") {
  std::vector<SampleOutcomeRow> rows(2);
  for (auto& r : rows) r.problem.assign(1, 'p'), r.level.assign(1, '1');
  rows[0].correct = true;
  rows[0].speedup_eager = 1.5;
  nlohmann::json m = compute_metrics(rows, {}, 2, 2, "test");
  m["turns"] = nullptr;
  m["policy"] = nullptr;
  m["groups"][0]["level"] = nullptr;
  m["groups"][0]["correct_rate"] = nullptr;
  std::string table, csv;
  CHECK_NOTHROW(table = render_metrics_table(m));
  CHECK_NOTHROW(csv = metrics_csv(m));
  CHECK(table.find("correct") != std::string::npos);
  CHECK(csv.rfind("policy,level,baseline", 0) == 0);
}
