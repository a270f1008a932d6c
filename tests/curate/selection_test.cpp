// ConCuR's criteria, each asserted on the selected set, and the exact selection of a fixed set.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "curate/code_fingerprint.h"
#include "curate/selection.h"
#include "curate/sft_rows.h"
#include "curate_fixture.h"

using namespace kagent;
using namespace kagent::curate;

namespace {

std::vector<dataset::SourceTrajectory> fixed_runs() {
  std::vector<dataset::SourceTrajectory> runs;
  for (const auto& s : testing::fixed_samples()) runs.push_back({"run-" + s.task, testing::make_trajectory(s)});
  return runs;
}

// Every criterion, checked on whatever was selected.
void check_criteria(const Selection& s, const Criteria& c) {
  std::set<std::string> prints;
  std::map<std::string, int> per_task;
  int single = 0, fused = 0;
  for (const auto& r : s.rows) {
    const auto& turn = r.the_turn();
    CHECK(turn.correct());
    CHECK(*turn.speedup_eager() >= c.min_speedup);
    CHECK(turn.eval->guards.empty());
    if (c.dedupe) CHECK(prints.insert(code_fingerprint(turn.code)).second);
    CHECK(++per_task[r.source->trajectory.problem.name] <= c.per_task);
    ++(r.single_op ? single : fused);
  }
  if (c.single_per_fused && fused > 0) CHECK(single <= *c.single_per_fused * fused + 1e-9);
  if (c.single_per_fused && single > 0) CHECK(fused <= single / *c.single_per_fused + 1e-9);
}

std::vector<std::string> picked(const Selection& s) {
  std::vector<std::string> out;
  for (const auto& r : s.rows) out.push_back(r.source->trajectory.problem.name + "/" + std::to_string(r.source->trajectory.sample) +
                                             "/" + std::to_string(r.turn));
  return out;
}

}  // namespace

TEST_CASE("near-duplicates differ only in comments and whitespace") {
  CHECK(normalise_code("int  a = 1; // one\n/* two */ int b;") == "int a=1;int b;");
  CHECK(normalise_code("s = \"// not a comment\"  # py comment\nx") == "s=\"// not a comment\"x");
  CHECK(code_fingerprint("#include <x>\nint a;") != code_fingerprint("int a;"));
  CHECK(code_fingerprint(testing::kernel("y[0] = 1.f")) == code_fingerprint("// c\n" + testing::kernel("y[0]  = 1.f /* x */")));
}

TEST_CASE("defaults: correct, speedup >= 1, unguarded, deduplicated, the shortest reasoning per task") {
  const auto runs = fixed_runs();
  Criteria c;
  const auto s = select(runs, c);
  check_criteria(s, c);
  // 1_relu: s1/t0 (2 chars) beats s0/t0 (its duplicate, 4) and s0/t1 (10); s1/t1 is below 1.0.
  CHECK(picked(s) == std::vector<std::string>{"1_relu/1/0", "1_relu_double/0/0", "2_double/0/1", "3_abs/0/0"});
  CHECK(s.counts.turns == 10);
  CHECK(s.counts.correct_fast == 8);
  CHECK(s.counts.guarded == 1);
  CHECK(s.counts.duplicates == 1);
  CHECK(s.counts.over_task_limit == 2);
  CHECK(s.counts.single_op == 3);
  CHECK(s.counts.fused == 1);
}

TEST_CASE("k per task, a higher threshold, and single/fused balance") {
  const auto runs = fixed_runs();
  Criteria c;
  c.per_task = 2;
  auto s = select(runs, c);
  check_criteria(s, c);
  CHECK(picked(s) == std::vector<std::string>{"1_relu/1/0", "1_relu/0/1", "1_relu_double/0/0", "1_relu_double/0/1",
                                              "2_double/0/1", "3_abs/0/0"});
  c.single_per_fused = 1.0;  // 4 single rows against 2 fused: the 2 singles of longest reasoning go
  s = select(runs, c);
  check_criteria(s, c);
  CHECK(picked(s) == std::vector<std::string>{"1_relu/1/0", "1_relu_double/0/0", "1_relu_double/0/1", "3_abs/0/0"});
  CHECK(s.counts.balance_dropped == 2);
  Criteria fast;
  fast.min_speedup = 1.45;
  s = select(runs, fast);
  check_criteria(s, fast);
  CHECK(picked(s) == std::vector<std::string>{"1_relu/0/0"});  // 1.5 (the 2.0 turn has longer reasoning)
  Criteria keep;
  keep.dedupe = false;
  keep.per_task = 5;
  s = select(runs, keep);
  CHECK(s.counts.duplicates == 0);
  CHECK(s.rows.size() == 7);
}

TEST_CASE("SFT rows: OpenAI roles, reasoning as a think block or reasoning_content") {
  const auto runs = fixed_runs();
  const auto s = select(runs, Criteria{});
  const auto think = sft_row(s.rows[1], ReasoningStyle::ThinkBlock);
  REQUIRE(think["messages"].size() == 3);
  CHECK(think["messages"][0]["role"] == "system");
  CHECK(think["messages"][1]["role"] == "user");
  CHECK(think["messages"][2]["role"] == "assistant");
  CHECK(think["messages"][2]["content"].get<std::string>().rfind("<think>\n" + std::string(20, 'e') + "\n</think>\n\n```cuda", 0) == 0);
  const auto rc = sft_row(s.rows[1], ReasoningStyle::ReasoningContent);
  CHECK(rc["messages"][2]["reasoning_content"] == std::string(20, 'e'));
  CHECK(rc["messages"][2]["content"].get<std::string>().rfind("```cuda", 0) == 0);
  CHECK(rc["task"] == "1_relu_double");
  CHECK(rc["level"] == 2);
}

TEST_CASE("an empty selection says which step left nothing") {
  // Only fused tasks (as when every problem's op type came out "fused"): balancing empties the set.
  std::vector<dataset::SourceTrajectory> fused;
  for (const auto& s : testing::fixed_samples())
    if (s.level == 2) fused.push_back({"run-" + s.task, testing::make_trajectory(s)});
  Criteria c;
  c.single_per_fused = 1.0;
  auto s = select(fused, c);
  CHECK(s.rows.empty());
  CHECK(s.empty_reason == "--single-per-fused 1 drops all 1: they are all fused, with no single-operator row to balance against");
  c.single_per_fused.reset();
  s = select(fused, c);
  CHECK(s.rows.size() == 1);
  CHECK(s.empty_reason.empty());
  Criteria fast;
  fast.min_speedup = 100;
  CHECK(select(fixed_runs(), fast).empty_reason == "no turn is correct with a speedup over eager of at least 100");
  CHECK(select({}, Criteria{}).empty_reason == "the runs hold no finished turn");
}

TEST_CASE("SFT rows carry the turn's record: problem, format, status and both policies' verdicts") {
  auto runs = fixed_runs();
  for (auto& r : runs) r.format = "kernelbench";
  const auto s = select(runs, Criteria{});
  const auto row = sft_row(s.rows[1], ReasoningStyle::ThinkBlock);
  CHECK(row["problem"] == "1_relu_double");
  CHECK(row["format"] == "kernelbench");
  CHECK(row["status"] == "correct");
  CHECK(row["status_policy"] == "strict");  // a record without verdicts: strict's, the only policy there was
  CHECK(row["verdicts"]["kernelbench"] == nlohmann::json({{"status", "correct"}, {"reason", ""}}));
  CHECK(row["verdicts"]["strict"] == nlohmann::json({{"status", "correct"}, {"reason", ""}}));
}
