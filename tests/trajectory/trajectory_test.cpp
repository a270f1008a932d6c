#include <doctest/doctest.h>

#include "traj_test_util.h"
#include "trajectory/rewards.h"
#include "trajectory/trajectory.h"

using namespace kagent;
using namespace kagent::traj;
using namespace kagent::traj::testing;

TEST_CASE("trajectory: JSON round trip keeps every field") {
  Trajectory t = make_trajectory(3);
  t.run_id = "20260101-000000-19_ReLU";
  t.model.sampling.top_p = 0.95;
  t.model.sampling.top_k = 40;
  t.model.sampling.seed = 1234567890123LL;
  t.model.sampling.reasoning_effort = "high";
  t.model.sampling.extra = {{"min_p", 0.05}};
  t.turns.push_back(make_turn(0, Status::CompileError));
  t.turns[0].eval->compile = CompileInfo{};
  t.turns[0].eval->compile->errors = "error: expected ';'";
  t.turns.push_back(make_format_error_turn(1));
  t.turns.push_back(make_turn(2, Status::Correct, 1.75));
  t.turns[2].extra = {{"logprobs", {-0.1, -0.2}}, {"token_ids", {1, 2, 3}}};
  t.turns[2].messages.push_back({"assistant", "unicode: \xce\xbb \"quoted\"\nnewline"});
  assign_rewards(t);
  t.status = SampleStatus::Stopped;
  t.stop_reason = StopReason::TargetSpeedup;
  t.finished_at = now_iso8601();

  nlohmann::json j = t;
  Trajectory back = j.get<Trajectory>();
  nlohmann::json j2 = back;
  CHECK(j == j2);

  CHECK(back.sample == 3);
  CHECK(back.problem.level == 1);
  CHECK(back.problem.op_type == "single-op");
  CHECK(back.model.sampling.temperature == doctest::Approx(0.7));
  CHECK(back.model.sampling.seed == 1234567890123LL);
  REQUIRE(back.turns.size() == 3);
  CHECK(back.turns[1].error->kind == "format");
  CHECK_FALSE(back.turns[1].eval.has_value());
  CHECK(back.turns[0].eval->status == Status::CompileError);
  CHECK(back.turns[2].correct());
  CHECK(back.turns[2].speedup_eager() == doctest::Approx(1.75));
  CHECK(back.turns[2].tokens.prompt == 102);
  CHECK(back.best_turn == 2);
  CHECK(back.status == SampleStatus::Stopped);
  CHECK(back.stop_reason == StopReason::TargetSpeedup);
  CHECK(j["turns"][2]["return"].is_number());
  CHECK(j["tokens"]["prompt"] == 100 + 10 + 102);
  // One JSON line: the dump has no raw newline.
  CHECK(j.dump().find('\n') == std::string::npos);
}

TEST_CASE("trajectory: minimal and future lines") {
  Trajectory t = nlohmann::json{{"sample", 5}}.get<Trajectory>();
  CHECK(t.sample == 5);
  CHECK(t.status == SampleStatus::Running);
  CHECK(t.turns.empty());
  CHECK(t.next_turn() == 0);
  CHECK_THROWS(nlohmann::json{{"sample", 1}, {"schema_version", kSchemaVersion + 1}}.get<Trajectory>());
  CHECK_THROWS(nlohmann::json{{"sample", 1}, {"status", "exploded"}}.get<Trajectory>());
}

TEST_CASE("trajectory: status and stop reason names") {
  for (auto s : {SampleStatus::Running, SampleStatus::Finished, SampleStatus::Failed, SampleStatus::Stopped})
    CHECK(sample_status_from_string(to_string(s)) == s);
  for (auto r : {StopReason::None, StopReason::TurnLimit, StopReason::TargetSpeedup, StopReason::Budget,
                 StopReason::Cancelled, StopReason::Error})
    CHECK(stop_reason_from_string(to_string(r)) == r);
  CHECK(to_string(StopReason::TurnLimit) == "turn_limit");
  CHECK(to_string(StopReason::TargetSpeedup) == "target_speedup");
  CHECK(to_string(StopReason::Budget) == "budget");
}

TEST_CASE("trajectory: op type from level or forward()") {
  CHECK(op_type_for(1, "") == "single-op");
  CHECK(op_type_for(2, "") == "fused");
  CHECK(op_type_for(3, "") == "model");
  const char* single = R"(import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # a comment(
        return torch.relu(x)

def get_inputs():
    return [torch.randn(4, 4)]
)";
  CHECK(op_type_for(std::nullopt, single) == "single-op");
  const char* fused = R"(
class Model(nn.Module):
    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        return x + self.bias
)";
  CHECK(op_type_for(std::nullopt, fused) == "fused");
  CHECK(op_type_for(std::nullopt, "no forward here") == "unknown");

  ProblemSpec spec;
  spec.name = "1_Conv_ReLU";
  spec.sha256 = "ff";
  spec.level = 2;
  auto info = problem_info_from_spec(spec);
  CHECK(info.name == "1_Conv_ReLU");
  CHECK(info.op_type == "fused");
}

TEST_CASE("trajectory: token totals") {
  Trajectory t = make_trajectory(0);
  t.turns.push_back(make_turn(0, Status::Wrong));
  t.turns.push_back(make_turn(1, Status::Correct, 1.0));
  auto tot = t.total_tokens();
  CHECK(tot.prompt == 201);
  CHECK(tot.completion == 101);
  CHECK(tot.reasoning == 40);
  CHECK(tot.total() == 302);
}
