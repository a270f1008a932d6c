// The rows `kagent rollout` writes: per-turn samples with rewards and returns, token ids and
// logprobs carried, advantages per task, and one verl/SkyRL prompt row per task.
#include <doctest/doctest.h>

#include "rollout/rollout_rows.h"
#include "rollout_fixture.h"

using namespace kagent;
using namespace kagent::rollout;

TEST_CASE("sample rows: reward, return, advantage per task, carried token ids") {
  std::vector<dataset::SourceTrajectory> runs = {{"run-a", testing::four_turns("1_relu", 0)},
                                                 {"run-a", testing::four_turns("1_relu", 1)},
                                                 {"run-b", testing::four_turns("2_double", 0)}};
  runs[1].trajectory.turns[3].eval = testing::verdict(Status::Wrong, true);
  runs[0].trajectory.turns[2].extra = {{"token_ids", {1, 2, 3}}, {"logprobs", {-0.1, -0.2, -0.3}}, {"other", 1}};
  RolloutOptions o;
  o.preset = reward_preset("kevin");
  o.group_normalise = true;
  const auto rows = sample_rows(runs, o);
  REQUIRE(rows.size() == 12);
  CHECK(rows[2]["reward"].get<double>() == doctest::Approx(1.5));
  CHECK(rows[2]["return"].get<double>() == doctest::Approx(3.22));
  CHECK(rows[2]["token_ids"] == nlohmann::json({1, 2, 3}));
  CHECK(rows[2]["logprobs"].size() == 3);
  CHECK_FALSE(rows[2].contains("other"));
  CHECK(rows[0]["status"] == "error:format");
  CHECK(rows[7]["return"].get<double>() == 0.0);  // sample 1's last turn is wrong now
  // 1_relu: returns {0.5152,1.288,3.22,4.3, 0.24,0.6,1.5,0}: mean 1.4454; 2_double alone: its own four.
  double mean = 0;
  for (int i = 0; i < 8; ++i) mean += rows[static_cast<size_t>(i)]["advantage"].get<double>();
  CHECK(mean == doctest::Approx(0).epsilon(1e-9));
  CHECK(rows[3]["advantage"].get<double>() > rows[2]["advantage"].get<double>());
  CHECK(rows[1]["return"].get<double>() == doctest::Approx(1.288));
}

TEST_CASE("sample rows: the speedup's interval where the evaluation ran paired rounds, and the reward that reads it") {
  std::vector<dataset::SourceTrajectory> runs = {{"run-a", testing::four_turns("1_relu", 0)}};
  runs[0].trajectory.turns[3].eval->timing->rounds = summarize_rounds({3.0, 3.5, 3.2});
  RolloutOptions o;
  o.preset = nlohmann::json{{"name", "kevin"}, {"speedup_from", "rounds_low"}}.get<RewardPreset>();
  const auto rows = sample_rows(runs, o);
  REQUIRE(rows.size() == 4);
  CHECK(rows[2]["speedup_rounds"].is_null());  // timed, no rounds
  CHECK(rows[3]["speedup_rounds"]["low"].get<double>() == doctest::Approx(3.0));
  CHECK(rows[3]["speedup_rounds"]["resolved"] == false);
  CHECK(rows[3]["speedup_eager"].get<double>() == doctest::Approx(4.0));  // the timing's, as recorded
  CHECK(rows[3]["reward"].get<double>() == doctest::Approx(0.3 + 3.0));   // the rounds' low end
  CHECK(rows[2]["reward"].get<double>() == doctest::Approx(0.3 + 1.2));   // no rounds: the timing's
}

TEST_CASE("prompt rows: one per task, in the fields verl and SkyRL read") {
  std::vector<dataset::SourceTrajectory> runs = {{"r", testing::four_turns("1_relu", 0)},
                                                 {"r", testing::four_turns("1_relu", 1)},
                                                 {"r", testing::four_turns("2_double", 0)}};
  RolloutOptions o;
  o.preset = reward_preset("drkernel");
  const auto rows = prompt_rows(runs, o);
  REQUIRE(rows.size() == 2);
  for (const char* key : {"data_source", "prompt", "ability", "env_class", "reward_model", "reward_spec", "extra_info"})
    CHECK(rows[0].contains(key));
  CHECK(rows[0]["prompt"][0]["role"] == "system");
  CHECK(rows[0]["prompt"][1]["content"] == "task 1_relu");
  CHECK(rows[1]["reward_spec"]["ground_truth"] == "2_double");
  CHECK(rows[1]["reward_model"]["style"] == "rule");
  CHECK(rows[1]["extra_info"]["reward"]["name"] == "drkernel");
  CHECK(rows[1]["extra_info"]["index"] == 1);
}

namespace {

// Correct under kernelbench (cuBLAS did part of the work: flagged there), rejected under strict:
// the verdict the run recorded (its ruling policy, kernelbench) is not the reward's (strict).
EvalResult library_gemm(double speedup) {
  EvalResult r = testing::verdict(Status::Correct, true, speedup);
  r.format = "kernelbench";
  r.guards.push_back({"library_share", kGuardReject, "cuBLAS did 80% of the GPU time", ""});
  apply_policies(r, Policy::KernelBench);
  return r;
}

}  // namespace

TEST_CASE("sample rows: both policies' verdicts, the reward's policy, the problem and the format") {
  std::vector<dataset::SourceTrajectory> runs = {{"run-a", testing::four_turns("lb_l2_p10_gpto1", 0), "kernelbench"}};
  runs[0].trajectory.turns[3].eval = library_gemm(1.17);
  RolloutOptions o;
  o.preset = reward_preset("kevin");  // strict by default
  const auto rows = sample_rows(runs, o);
  REQUIRE(rows.size() == 4);
  const auto& gemm = rows[3];
  CHECK(gemm["status"] == "correct");  // as before: the run's recorded verdict ...
  CHECK(gemm["status_policy"] == "kernelbench");  // ... which is kernelbench's
  CHECK(gemm["reward"] == 0.0);
  CHECK(gemm["reward_policy"] == "strict");
  CHECK(gemm["verdicts"]["kernelbench"] == nlohmann::json({{"status", "correct"}, {"reason", ""}}));
  CHECK(gemm["verdicts"]["strict"] == nlohmann::json({{"status", "rejected"}, {"reason", "library_share"}}));
  CHECK(gemm["problem"] == "lb_l2_p10_gpto1");
  CHECK(gemm["format"] == "kernelbench");
  // A turn without a verdict: its error under both policies, the message as the reason.
  CHECK(rows[0]["verdicts"]["strict"] == nlohmann::json({{"status", "error:format"}, {"reason", "no code"}}));
  CHECK(rows[0]["verdicts"]["kernelbench"]["status"] == "error:format");
  CHECK(rows[0]["status_policy"].is_null());
  // Under kernelbench the same turn is rewarded, and the row says so.
  o.preset.policy = Policy::KernelBench;
  const auto kb = sample_rows(runs, o);
  CHECK(kb[3]["reward"].get<double>() == doctest::Approx(0.3 + 1.17));
  CHECK(kb[3]["reward_policy"] == "kernelbench");
}

TEST_CASE("prompt rows: the answer format and the problem wherever a trainer reads them, one row per format") {
  std::vector<dataset::SourceTrajectory> runs = {{"cuda-run", testing::four_turns("1_relu", 0), "cuda"},
                                                 {"kb-run", testing::four_turns("1_relu", 0), "kernelbench"},
                                                 {"kb-run", testing::four_turns("1_relu", 1), "kernelbench"}};
  RolloutOptions o;
  const auto rows = prompt_rows(runs, o);
  REQUIRE(rows.size() == 2);  // one per (problem, format)
  const auto& kb = rows[1];
  CHECK(kb["format"] == "kernelbench");
  CHECK(kb["problem"] == "1_relu");
  CHECK(kb["task_id"] == "1_relu");
  CHECK(kb["reward_spec"]["format"] == "kernelbench");
  CHECK(kb["reward_spec"]["problem"] == "1_relu");
  CHECK(kb["reward_spec"]["ground_truth"] == "1_relu");
  CHECK(kb["extra_info"]["format"] == "kernelbench");
  CHECK(kb["extra_info"]["problem"] == "1_relu");
  CHECK(kb["extra_info"]["interaction_kwargs"] ==
        nlohmann::json({{"name", "kagent"}, {"task_id", "1_relu"}, {"problem", "1_relu"}, {"format", "kernelbench"}}));
  CHECK(rows[0]["format"] == "cuda");
  CHECK(rows[0]["extra_info"]["interaction_kwargs"]["format"] == "cuda");
}
