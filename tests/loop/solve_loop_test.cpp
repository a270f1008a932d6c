// The whole refinement loop against a real model server on loopback (OpenAI protocol, real
// client, real prompts and run folder). The GPU verdicts come from a scripted evaluator here
// (no GPU in CI); tests/gpu/solve_gpu_test runs the same story with real evaluation.
// Story: turn 1 fails to compile, turn 2 is wrong, turn 3 is correct but slow, turn 4 is fast.
#include <doctest/doctest.h>

#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "named_device.h"
#include "fake_llm_server.h"
#include "llm_server_util.h"
#include "llm_test_util.h"
#include "loop/solve_runner.h"

using namespace kagent;
using namespace kagent::testing;

namespace {

ProblemSpec gelu_spec() {
  ProblemSpec s;
  s.name = "gelu";
  s.path = "/problems/gelu.py";
  s.sha256 = std::string(64, 'a');
  s.source = "class Model(nn.Module):\n    def forward(self, x):\n        return torch.nn.functional.gelu(x)\n";
  TensorArg x;
  x.name = x.cpp_name = "x";
  x.dtype = "float32";
  x.shape = {512, 1024};
  s.inputs = {x};
  s.outputs = {{"float32", {512, 1024}}};
  s.torch_version = "2.11.0";
  return s;
}

EvalResult compile_error() {
  EvalResult r;
  r.status = Status::CompileError;
  r.message = "nvcc failed";
  CompileInfo c;
  c.ok = false;
  c.errors = "s0-t1.cu:8:21: error: no suitable conversion function from \"const float4\" to \"const float\" exists";
  r.compile = c;
  return r;
}

EvalResult wrong() {
  EvalResult r;
  r.status = Status::Wrong;
  r.reason = reason::kValues;
  r.message = "trial 1 (before reference), output 0: 524288 of 524288 elements outside tolerance";
  Correctness c;
  c.trials = 5;
  OutputCheck oc;
  oc.ok = false;
  oc.reason = reason::kValues;
  oc.mismatched = 524288;
  oc.numel = 524288;
  oc.max_abs_error = 3.7412;
  oc.max_rel_error = 1.0;
  oc.worst_index = {17, 3};
  oc.atol = oc.rtol = 0.01;
  oc.samples = {{{0, 0}, 1.5, 0.75}};
  c.first_failure = oc;
  c.first_failure_trial = 0;
  c.first_failure_run = "before reference";
  r.correctness = c;
  return r;
}

EvalResult correct(double candidate_ms, double eager_ms, const std::string& profile_text) {
  EvalResult r;
  r.status = Status::Correct;
  r.message = "correct in 5 trials";
  Correctness c;
  c.trials = c.trials_passed = 5;
  r.correctness = c;
  Timing t;
  TimingStats cand, eager;
  cand.median_ms = candidate_ms;
  cand.iterations = 100;
  eager.median_ms = eager_ms;
  t.candidate = cand;
  t.eager = eager;
  t.speedup_eager = eager_ms / candidate_ms;
  r.timing = t;
  r.profile = {{"text", profile_text}};
  return r;
}

// Verdicts in turn order, and what it was given.
class ScriptedEvaluator : public loop::CandidateEvaluator {
 public:
  explicit ScriptedEvaluator(std::vector<EvalResult> verdicts) : verdicts_(std::move(verdicts)) {}
  EvalResult evaluate(const std::string& code, const std::filesystem::path& file) override {
    std::lock_guard lock(mu_);
    codes.push_back(code);
    files.push_back(file);
    REQUIRE(next_ < verdicts_.size());
    return verdicts_[next_++];
  }
  std::vector<std::string> codes;
  std::vector<std::filesystem::path> files;

 private:
  std::mutex mu_;
  std::vector<EvalResult> verdicts_;
  size_t next_ = 0;
};

std::string answer(int turn) {
  return "Attempt " + std::to_string(turn) + ".\n\n```cuda\n// kernel v" + std::to_string(turn) +
         "\nat::Tensor forward(at::Tensor x) { return x; }\n```\n";
}

std::string all_content(const nlohmann::json& body) {
  std::string s;
  for (const auto& m : body["messages"]) s += m["content"].get<std::string>() + "\n";
  return s;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("four turns: compile error, wrong, slow, fast; each prompt carries the evidence of the turn before") {
  FakeLlmServer server;
  for (int t = 1; t <= 4; ++t) {
    Script s;
    s.text = answer(t);
    s.reasoning = "thinking about turn " + std::to_string(t);
    server.push(s);
  }
  llm::LlmConfig cfg = server_config(server);
  auto client = llm::make_client(cfg);
  TempDir dir;
  auto store = traj::RunStore::create_at(dir.str() + "/run", {{"problem", "gelu"}}, {{}, false});
  ProblemSpec spec = gelu_spec();
  prompt::PromptBuilder prompts;
  ScriptedEvaluator evaluator({compile_error(), wrong(),
                               correct(0.9, 0.07, "gelu_kernel 100.0% of GPU time; DRAM 61 GB/s (1% of peak): latency-bound"),
                               correct(0.066, 0.07, "gelu_vec4_kernel 100.0%; DRAM 3950 GB/s (92% of peak): memory-bound")});
  std::vector<std::string> events;
  std::mutex ev_mu;
  loop::SampleContext ctx{.llm = *client,
                          .evaluator = evaluator,
                          .prompts = prompts,
                          .store = *store,
                          .spec = spec,
                          .format = prompt::AnswerFormat::Cuda,
                          .system_prompt = prompts.system_prompt(prompt::AnswerFormat::Cuda, named_device("NVIDIA H200")),
                          .task_prompt = prompts.task_prompt(spec, prompt::AnswerFormat::Cuda),
                          .history = {},
                          .limits = {4, std::nullopt, std::nullopt, std::nullopt},
                          .sampling = std::nullopt,
                          .on_event = [&](const loop::LoopEvent& e) {
                            std::lock_guard lock(ev_mu);
                            events.push_back(std::to_string(static_cast<int>(e.phase)) + ":" + std::to_string(e.turn));
                          }};
  traj::Trajectory fresh;
  fresh.run_id = store->run_id();
  fresh.problem = traj::problem_info_from_spec(spec);
  fresh.max_turns = 4;
  llm::CancelToken cancel;
  loop::SolveOutcome out = loop::run_samples(ctx, fresh, 1, cancel);
  REQUIRE_FALSE(out.aborted);
  REQUIRE(out.samples.size() == 1);
  CHECK(out.samples[0].recorded);

  // The requests the model server saw.
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 4);
  CHECK(reqs[0].body["messages"].size() == 2);  // system + task
  CHECK(has(all_content(reqs[0].body), "torch::Tensor forward(torch::Tensor x)"));  // the exact signature
  // Turn 2 sees the compiler's error text with its source position.
  CHECK(has(all_content(reqs[1].body), "s0-t1.cu:8:21: error: no suitable conversion function"));
  // Turn 3 sees the mismatch numbers.
  std::string r3 = all_content(reqs[2].body);
  CHECK(has(r3, "524288 of 524288 elements outside"));
  CHECK(has(r3, "3.74"));
  CHECK(has(r3, "got 1.5, expected 0.75"));
  // Turn 4 sees the timing and the profile.
  std::string r4 = all_content(reqs[3].body);
  CHECK(has(r4, "900.0 us"));
  CHECK(has(r4, "70.0 us"));
  CHECK(has(r4, "0.08x over eager"));
  CHECK(has(r4, "latency-bound"));
  CHECK(has(r4, "not faster than PyTorch eager"));
  // History policy "kernels": earlier code stays, reasoning and prose do not.
  CHECK(has(r4, "// kernel v1"));
  CHECK(has(r4, "// kernel v3"));
  CHECK_FALSE(has(r4, "thinking about turn"));
  CHECK_FALSE(has(r4, "Attempt 2."));

  // The evaluator got each turn's code, saved under candidates/.
  REQUIRE(evaluator.codes.size() == 4);
  CHECK(has(evaluator.codes[3], "// kernel v4"));
  CHECK(evaluator.files[0].filename() == "s0-t1.cu");
  CHECK(evaluator.files[3].filename() == "s0-t4.cu");

  // The trajectory file: one line, the sample, four turns in order with their verdicts.
  auto lines = lines_of(store->dir() / traj::kTrajectoriesFile);
  REQUIRE(lines.size() == 1);
  auto j = nlohmann::json::parse(lines[0]);
  CHECK(j["sample"] == 0);
  CHECK(j["status"] == "finished");
  CHECK(j["stop_reason"] == "turn_limit");
  REQUIRE(j["turns"].size() == 4);
  const char* statuses[] = {"compile_error", "wrong", "correct", "correct"};
  for (int t = 0; t < 4; ++t) {
    const auto& turn = j["turns"][t];
    CHECK(turn["index"] == t);
    CHECK(turn["eval"]["status"] == statuses[t]);
    CHECK(turn["reasoning"] == "thinking about turn " + std::to_string(t + 1));
    CHECK(has(turn["code"].get<std::string>(), "// kernel v" + std::to_string(t + 1)));
    CHECK(turn["messages"].size() == static_cast<size_t>(2 + 2 * t));  // system, task, then pairs
    CHECK(turn["messages"][0]["role"] == "system");
    CHECK_FALSE(turn["feedback"].get<std::string>().empty());
    CHECK(turn["reward"].is_number());
  }
  // The feedback recorded for turn t is what turn t+1 sent.
  for (int t = 0; t < 3; ++t)
    CHECK(j["turns"][t + 1]["messages"].back()["content"] == j["turns"][t]["feedback"]);
  CHECK(j["best_turn"] == 3);
  CHECK(j["turns"][0]["reward"] == 0.0);
  CHECK(j["turns"][3]["reward"].get<double>() > j["turns"][2]["reward"].get<double>());
  // best.cu holds turn 4's code; summary.json points at it.
  std::ifstream best(store->dir() / "best.cu");
  std::stringstream ss;
  ss << best.rdbuf();
  CHECK(has(ss.str(), "// kernel v4"));
  // Events: asking/evaluating/done for each turn, then the end.
  CHECK(events.size() == 13);
}

TEST_CASE("a target speedup ends the sample early; a token budget stops it before the next turn") {
  FakeLlmServer server;
  for (int t = 1; t <= 3; ++t) {
    Script s;
    s.text = answer(t);
    server.push(s);
  }
  auto client = llm::make_client(server_config(server));
  TempDir dir;
  ProblemSpec spec = gelu_spec();
  prompt::PromptBuilder prompts;
  traj::Trajectory fresh;
  fresh.problem = traj::problem_info_from_spec(spec);
  llm::CancelToken cancel;

  SUBCASE("target") {
    auto store = traj::RunStore::create_at(dir.str() + "/run", {{"problem", "gelu"}}, {{}, false});
    ScriptedEvaluator ev({wrong(), correct(0.05, 0.07, "p"), correct(0.01, 0.07, "p")});
    loop::SampleContext ctx{*client, ev, prompts, *store, spec};
    ctx.task_prompt = "TASK";
    ctx.limits = {5, 1.2, std::nullopt, std::nullopt};
    auto out = loop::run_samples(ctx, fresh, 1, cancel);
    CHECK(out.samples[0].trajectory.turns.size() == 2);
    CHECK(out.samples[0].trajectory.stop_reason == traj::StopReason::TargetSpeedup);
  }
  SUBCASE("budget") {
    auto store = traj::RunStore::create_at(dir.str() + "/run2", {{"problem", "gelu"}}, {{}, false});
    ScriptedEvaluator ev({wrong(), wrong(), wrong()});
    loop::SampleContext ctx{*client, ev, prompts, *store, spec};
    ctx.task_prompt = "TASK";
    ctx.limits = {5, std::nullopt, 1, std::nullopt};  // the first turn's tokens use it up
    auto out = loop::run_samples(ctx, fresh, 1, cancel);
    CHECK(out.samples[0].trajectory.turns.size() == 1);
    CHECK(out.samples[0].trajectory.stop_reason == traj::StopReason::Budget);
  }
}

TEST_CASE("answers with no code, two code blocks or 1 MB become format errors the model is told about") {
  FakeLlmServer server;
  Script none, two, huge, good;
  none.text = "I would use shared memory here.";
  two.text = "```cuda\n// a\n```\nor\n```cuda\n// b\n```\n";
  huge.text = std::string(1 << 20, 'y');
  good.text = answer(4);
  for (auto& s : {none, two, huge, good}) server.push(s);
  auto client = llm::make_client(server_config(server));
  TempDir dir;
  auto store = traj::RunStore::create_at(dir.str() + "/run", {{"problem", "gelu"}}, {{}, false});
  ProblemSpec spec = gelu_spec();
  prompt::PromptBuilder prompts;
  ScriptedEvaluator ev({correct(0.05, 0.07, "p")});
  loop::SampleContext ctx{*client, ev, prompts, *store, spec};
  ctx.task_prompt = "TASK";
  ctx.limits = {4, std::nullopt, std::nullopt, std::nullopt};
  traj::Trajectory fresh;
  fresh.problem = traj::problem_info_from_spec(spec);
  llm::CancelToken cancel;
  auto out = loop::run_samples(ctx, fresh, 1, cancel);
  const auto& turns = out.samples[0].trajectory.turns;
  REQUIRE(turns.size() == 4);
  for (int t = 0; t < 3; ++t) {
    REQUIRE(turns[t].error);
    CHECK(turns[t].error->kind == "format");
    CHECK_FALSE(turns[t].eval);
  }
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 4);
  CHECK(has(reqs[1].body["messages"].back()["content"].get<std::string>(), "no"));
  CHECK(has(reqs[2].body["messages"].back()["content"].get<std::string>(), "2"));
  // The 1 MB answer is recorded whole but shown to the model again only in part.
  CHECK(turns[2].answer.size() == (1u << 20));
  CHECK(reqs[3].body.dump().size() < 100000);
  CHECK(turns[3].correct());
  CHECK(ev.codes.size() == 1);
}

TEST_CASE("parallel samples: each its own conversation, one line each, evaluations from all threads") {
  FakeLlmServer server;
  Script s;
  s.text = answer(1);
  s.behavior = Behavior::Slow;  // answers take a while, so the samples' requests overlap
  s.chunk_delay_ms = 20;
  server.set_default(s);
  auto client = llm::make_client(server_config(server));
  TempDir dir;
  auto store = traj::RunStore::create_at(dir.str() + "/run", {{"problem", "gelu"}}, {{}, false});
  ProblemSpec spec = gelu_spec();
  prompt::PromptBuilder prompts;
  std::vector<EvalResult> verdicts(12, correct(0.05, 0.07, "p"));
  ScriptedEvaluator ev(verdicts);
  loop::SampleContext ctx{*client, ev, prompts, *store, spec};
  ctx.task_prompt = "TASK";
  ctx.limits = {3, std::nullopt, std::nullopt, std::nullopt};
  traj::Trajectory fresh;
  fresh.problem = traj::problem_info_from_spec(spec);
  llm::CancelToken cancel;
  auto out = loop::run_samples(ctx, fresh, 4, cancel);
  CHECK(server.request_count() == 12);
  CHECK(server.max_in_flight() >= 2);
  auto lines = lines_of(store->dir() / traj::kTrajectoriesFile);
  CHECK(lines.size() == 4);
  std::set<int> samples;
  for (const auto& l : lines) samples.insert(nlohmann::json::parse(l)["sample"].get<int>());
  CHECK(samples == std::set<int>{0, 1, 2, 3});
}
