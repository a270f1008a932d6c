#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "common/files.h"
#include "common/sha256.h"
#include "kernelbench_dir.h"
#include "problem/spec_cache.h"
#include "temp_dir.h"
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

TEST_CASE("trajectory: op type ignores forward()'s docstring, comments and strings") {
  const char* documented = R"(class Model(nn.Module):
    def forward(self, x: torch.Tensor,
                y: torch.Tensor) -> torch.Tensor:
        """
        Applies ReLU (max(x, 0)) to x.

        Args:
            x (torch.Tensor): Input tensor of shape (N, D).
        """
        return torch.relu(x)  # elementwise (one op)
)";
  CHECK(op_type_for(std::nullopt, documented) == "single-op");
  CHECK(op_type_for(std::nullopt, "def forward(self, x):\n    s = 'a (b) + c'\n    return torch.relu(x)\n") == "single-op");
}

// KernelBench's own files, placed where no "levelN" folder names their level (as the leaderboard's
// flat folder does): the heuristic alone must tell level 1's single operators from level 2's fused.
TEST_CASE("trajectory: op type of KernelBench's level-1 and level-2 problems from their code") {
  namespace fs = std::filesystem;
  const fs::path kb = kagent::testing::kernelbench_dir();
  if (!fs::is_directory(kb)) {
    if (std::getenv("CI")) FAIL("KernelBench problems expected at " << kb);
    MESSAGE("SKIPPED: no KernelBench problems at " << kb);
    return;
  }
  auto op_type_of = [&](const std::string& file) { return op_type_for(std::nullopt, read_file(kb / file)); };
  for (const char* single : {"level1/19_ReLU.py", "level1/1_Square_matrix_multiplication_.py", "level1/23_Softmax.py"}) {
    CAPTURE(single);
    CHECK(op_type_of(single) == "single-op");
  }
  int singles = 0, level1 = 0;
  for (const auto& e : fs::directory_iterator(kb / "level1")) {
    if (e.path().extension() != ".py") continue;
    ++level1;
    singles += op_type_for(std::nullopt, read_file(e.path())) == "single-op";
  }
  // 83 of the 100: the others compose operators themselves (Swish: x * sigmoid(x); RMSNorm).
  CHECK(level1 == 100);
  CHECK(singles >= 80);
  for (const auto& e : fs::directory_iterator(kb / "level2")) {
    if (e.path().extension() != ".py") continue;
    CAPTURE(e.path());
    CHECK(op_type_for(std::nullopt, read_file(e.path())) == "fused");
  }
}

// The spec cache is keyed by the file's contents: an identical file under another name (three of
// the KernelBench leaderboard's problems are) gets the cached spec, but its own name and level.
TEST_CASE("trajectory: a problem read from a spec cached for an identical file keeps its own name") {
  kagent::testing::TempDir dir("kagent-spec-cache-names");
  const std::string source = "class Model:\n    def forward(self, x):\n        return torch.relu(x)\n";
  ProblemSpec cached;
  cached.path = dir.write("level1/19_ReLU.py", source);
  cached.name = "19_ReLU";
  cached.level = 1;
  cached.sha256 = sha256_file_hex(cached.path);
  cached.source = source;
  store_cached_spec(dir.str() + "/cache", cached);
  const std::string copy = dir.write("leaderboard/l1_p19_gpt4o.py", source);
  const auto spec = load_cached_spec(dir.str() + "/cache", copy);
  REQUIRE(spec);
  CHECK(spec->sha256 == cached.sha256);  // the same entry ...
  const ProblemInfo info = problem_info_from_spec(*spec);
  CHECK(info.name == "l1_p19_gpt4o");  // ... under the asked file's own name, path and level
  CHECK(info.path == copy);
  CHECK_FALSE(info.level);
  CHECK(info.op_type == "single-op");
  CHECK(load_cached_spec(dir.str() + "/cache", cached.path)->name == "19_ReLU");
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
