// The real `kagent solve` binary: a run killed in the middle of a turn and resumed loses
// nothing and repeats nothing; each exit status of the table in docs/solve.md that a machine
// without a GPU can reach (0 needs one: tests/gpu/solve_gpu_test.cpp), each failure one clear
// line; the evaluation flags it shares with `kagent eval`; the live table's last state; the
// progress lines of a first run. Most answers carry no code (format errors): no nvcc time.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <thread>

#include "common/files.h"
#include "fake_llm_server.h"
#include "kagent_process.h"
#include "llm_server_util.h"
#include "llm_test_util.h"

using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

const std::string kProblem = std::string(KAGENT_SOURCE_DIR) + "/examples/elementwise_gelu.py";
const std::string kReplay = std::string(KAGENT_SOURCE_DIR) + "/examples/elementwise_gelu.replay.jsonl";
// Compiled answers and problem specs survive between runs of the suite (the build folder, not TMPDIR).
const std::string kSharedCache = "KAGENT_CACHE_DIR=" + std::string(KAGENT_BINARY_DIR) + "/test-cache/cli";

Script prose(const std::string& text) {
  Script s;
  s.text = text;
  return s;
}

fs::path only_run(const std::string& cwd) {
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(cwd + "/runs")) runs.push_back(e.path());
  REQUIRE(runs.size() == 1);
  return runs[0];
}

}  // namespace

TEST_CASE("a run killed mid-turn and resumed loses nothing and repeats nothing") {
  FakeLlmServer server;
  server.push(prose("turn one, no code"));
  server.push(prose("turn two, no code"));
  Script hang;
  hang.behavior = Behavior::Hang;
  server.push(hang);  // turn three never answers: the run is killed while waiting on it
  TempDir dir;
  std::vector<std::string> args = {"solve", kProblem, "--turns", "4", "--base-url", server.base_url(),
                                   "--model", "m", "--api-key", "k", "--no-stream"};
  KagentProcess proc = spawn_kagent(args, {}, dir.str());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (server.request_count() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(server.request_count() == 3);
  kill(-proc.pid, SIGKILL);
  KagentRun killed = proc.wait();
  CHECK(killed.status == 128 + SIGKILL);

  fs::path run = only_run(dir.path());
  CHECK(kagent::read_file((run / "trajectories.jsonl").string()).empty());  // the sample did not finish
  auto partial = nlohmann::json::parse(kagent::read_file((run / "partial" / "sample-0.json").string()));
  CHECK(partial["turns"].size() == 2);

  server.push(prose("turn three again, no code"));
  server.push(prose("turn four, no code"));
  KagentRun resumed = run_kagent({"solve", "--resume", run.string(), "--api-key", "k", "--base-url", server.base_url()}, {},
                           dir.str());
  INFO(resumed.err);
  INFO(resumed.out);
  CHECK(resumed.status == 1);  // finished, nothing correct
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 5);
  // Requests 1, 2 and 4 carry 0, 1, 2 earlier turns: turns 1 and 2 were not asked again.
  CHECK(reqs[3].body["messages"].size() == reqs[2].body["messages"].size());  // turn three, asked again
  CHECK(reqs[4].body["messages"].size() == reqs[3].body["messages"].size() + 2);

  std::string lines = kagent::read_file((run / "trajectories.jsonl").string());
  REQUIRE(count_lines(lines) == 1);
  auto t = nlohmann::json::parse(lines);
  REQUIRE(t["turns"].size() == 4);
  const char* answers[] = {"turn one, no code", "turn two, no code", "turn three again, no code", "turn four, no code"};
  for (int i = 0; i < 4; ++i) {
    CHECK(t["turns"][i]["index"] == i);
    CHECK(t["turns"][i]["answer"] == answers[i]);
  }
  CHECK(t["status"] == "finished");
  CHECK_FALSE(fs::exists(run / "partial" / "sample-0.json"));
  auto summary = nlohmann::json::parse(kagent::read_file((run / "summary.json").string()));
  CHECK(summary.is_object());

  // Resuming a finished run changes nothing and asks nothing.
  KagentRun again = run_kagent({"solve", "--resume", run.string(), "--api-key", "k", "--base-url", server.base_url()}, {},
                         dir.str());
  CHECK(again.status == 1);
  CHECK(server.request_count() == 5);
  CHECK(count_lines(kagent::read_file((run / "trajectories.jsonl").string())) == 1);
}

TEST_CASE("bad input: one clear line and a distinct exit status") {
  TempDir dir;
  SUBCASE("no API key") {
    KagentRun r = run_kagent({"solve", kProblem, "--model", "gpt-x"}, {}, dir.str());
    CHECK(r.status == 5);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "kagent solve: error:"));
    CHECK(has(r.err, "key"));
    CHECK_FALSE(fs::exists(dir.str() + "/runs"));  // nothing started
  }
  SUBCASE("unreachable server") {
    KagentRun r = run_kagent({"solve", kProblem, "--model", "m", "--api-key", "k", "--max-attempts", "2", "--base-url",
                        "http://127.0.0.1:" + std::to_string(closed_port())},
                       {}, dir.str());
    INFO(r.err);
    CHECK(r.status == 6);
    CHECK(has(r.err, "kagent solve: sample 0 stopped: model failed on turn 1"));
    CHECK(has(r.out, "resume    kagent solve --resume"));  // nothing lost: the run can go on later
  }
  SUBCASE("a problem file that does not load") {
    std::string bad = dir.write("broken.py", "import torch\nclass Model(:\n");
    FakeLlmServer server;
    KagentRun r = run_kagent({"solve", bad, "--model", "m", "--api-key", "k", "--base-url", server.base_url()}, {}, dir.str());
    CHECK(r.status == 4);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "cannot load problem"));
    CHECK(server.request_count() == 0);
  }
  SUBCASE("a missing problem file") {
    KagentRun r = run_kagent({"solve", dir.str() + "/nope.py", "--model", "m", "--api-key", "k"}, {}, dir.str());
    CHECK(r.status == 3);
    CHECK(count_lines(r.err) == 1);
  }
  SUBCASE("--resume of a folder that holds no run") {
    fs::create_directories(dir.str() + "/empty");
    KagentRun r = run_kagent({"solve", "--resume", dir.str() + "/empty", "--api-key", "k"}, {}, dir.str());
    CHECK(r.status == 7);
    CHECK(count_lines(r.err) == 1);
  }
  SUBCASE("neither a problem nor --resume") {
    KagentRun r = run_kagent({"solve"}, {}, dir.str());
    CHECK(r.status == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "kagent solve: error: missing PROBLEM"));
  }
  SUBCASE("--resume of a folder that holds no run: one plain line") {
    fs::create_directories(dir.str() + "/empty");
    KagentRun r = run_kagent({"solve", "--resume", dir.str() + "/empty"}, {}, dir.str());
    CHECK(r.err == "kagent solve: error: " + dir.str() + "/empty holds no kagent run (no config.json)\n");
  }
  SUBCASE("a config file with an unknown key: 5") {
    KagentRun r = run_kagent({"solve", kProblem, "--config", dir.write("bad.json", "{\"modle\": \"m\"}")}, {}, dir.str());
    CHECK(r.status == 5);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "kagent solve: error:"));
  }
  SUBCASE("the worker cannot start: 14") {
    KagentRun r = run_kagent({"solve", kProblem, "--llm", "replay:" + kReplay}, {"KAGENT_WORKER=/nonexistent/kagent-worker"},
                             dir.str());
    INFO(r.err);
    CHECK(r.status == 14);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "kagent solve: error: cannot start the worker"));
  }
}

TEST_CASE("the replay runs out on turn 2: exit 6, and the last table shows no turn in flight") {
  TempDir dir;
  // The first recorded answer only: a compile error (real nvcc).
  std::string first;
  std::istringstream lines(kagent::read_file(kReplay));
  for (std::string line; first.empty() && std::getline(lines, line);)
    if (line.rfind("{", 0) == 0) first = line + "\n";
  const std::string replay = dir.write("one.jsonl", first);
  KagentRun r = run_kagent({"solve", kProblem, "--llm", "replay:" + replay, "-t", "2"}, {kSharedCache}, dir.str());
  INFO(r.err);
  INFO(r.out);
  CHECK(r.status == 6);
  CHECK(has(r.err, "kagent solve: error: replay file"));
  CHECK_FALSE(has(r.out, "model.."));
  CHECK_FALSE(has(r.out, "eval.."));
  CHECK(has(r.out, "compile    stopped"));
}

TEST_CASE("the README's command on a machine without a GPU: compiled and checked, not run: exit 15") {
  TempDir dir;
  // CUDA_VISIBLE_DEVICES hides the GPU of a machine that has one.
  KagentRun r = run_kagent({"solve", kProblem, "--llm", "replay:" + kReplay, "-t", "2"},
                           {kSharedCache, "CUDA_VISIBLE_DEVICES="}, dir.str());
  INFO(r.err);
  INFO(r.out);
  CHECK(r.status == 15);
  CHECK(has(r.err, "no CUDA device visible"));
  CHECK(has(r.out, "compile    no gpu"));
}

TEST_CASE("Ctrl-C while the model thinks: exit 130, resumable") {
  FakeLlmServer server;
  server.set_default({.behavior = Behavior::Hang});
  TempDir dir;
  KagentProcess p = spawn_kagent({"solve", kProblem, "--base-url", server.base_url(), "--model", "m", "--api-key", "k"},
                                       {}, dir.str());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (server.request_count() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(server.request_count() >= 1);
  ::kill(p.pid, SIGINT);
  KagentRun stopped = p.wait();
  INFO(stopped.err);
  CHECK(stopped.status == 130);
  CHECK(has(stopped.out, "resume    kagent solve --resume"));
}

TEST_CASE("every evaluation flag of kagent eval is taken, and the run folder records it") {
  TempDir dir;
  const std::string replay = dir.write("prose.jsonl", "{\"text\": \"no code here\"}\n");
  KagentRun r = run_kagent({"solve", kProblem, "--llm", "replay:" + replay, "-t", "1", "--trials", "3", "--seed", "7",
                            "--atol", "0.05", "--rtol", "0.02", "--no-timing", "--no-profile", "--no-baselines",
                            "--no-compile-baseline", "--timeout", "60", "--gpu", "0", "--arch", "sm_90a", "--cache-dir",
                            dir.str() + "/evalcache", "--no-compile-cache", "--phase-budget", "load=50",
                            "--phase-gpu-budget", "timing=none,profile=90", "--json"},
                           {}, dir.str());
  INFO(r.err);
  CHECK(r.status == 1);  // the answer has no code: finished, nothing correct
  const auto config = nlohmann::json::parse(kagent::read_file((only_run(dir.str()) / "config.json").string()));
  const auto& eval = config["eval"];
  CHECK(eval["trials"] == 3);
  CHECK(eval["seed"] == 7);
  CHECK(eval["atol"] == 0.05);
  CHECK(eval["rtol"] == 0.02);
  CHECK(eval["no_timing"] == true);
  CHECK(eval["no_profile"] == true);
  CHECK(eval["no_baselines"] == true);
  CHECK(eval["no_compile_baseline"] == true);
  CHECK(eval["timeout"] == 60);
  CHECK(eval["gpus"] == nlohmann::json::array({0}));
  CHECK(eval["arch"] == "sm_90a");
  CHECK(eval["cache_dir"] == dir.str() + "/evalcache");
  CHECK(eval["no_compile_cache"] == true);
  // The budgets in force: the flags over the defaults, timing's lifted.
  CHECK(eval["phase_budgets"] == nlohmann::json::parse(R"({"load": {"wall": 50}, "guards_after_timing": {"gpu": 30},
                                                           "profile": {"gpu": 90}, "correctness": {"gpu": 60},
                                                           "guards_before_timing": {"gpu": 60}})"));
}

TEST_CASE("a first run says what it prepares, with times, on a terminal only") {
  TempDir dir;
  const std::string replay = dir.write("prose.jsonl", "{\"text\": \"no code here\"}\n");
  const std::vector<std::string> args = {"solve", kProblem, "--llm", "replay:" + replay, "-t", "1"};
  // A fresh cache (the test's own folder): the worker starts and derives the spec, seconds of work.
  KagentRun tty = run_kagent(args, {}, dir.str(), 0, {.input = "", .stderr_terminal = true});
  INFO(tty.err);
  CHECK(tty.status == 1);
  CHECK(has(tty.err, "kagent solve: loading the problem (a worker starts Python and torch, then runs it) ..."));
  CHECK(std::regex_search(tty.err, std::regex(R"(kagent solve: problem loaded in \d+\.\d s)")));
  fs::remove_all(dir.str() + "/cache");
  KagentRun quiet = run_kagent({"solve", kProblem, "--llm", "replay:" + replay, "-t", "1", "--json"}, {}, dir.str(), 0,
                               {.input = "", .stderr_terminal = true});
  CHECK_FALSE(has(quiet.err, "loading the problem"));
  fs::remove_all(dir.str() + "/cache");
  KagentRun piped = run_kagent(args, {}, dir.str());
  CHECK_FALSE(has(piped.err, "loading the problem"));
  CHECK(has(piped.out, "sample 0 turn 1: format"));
}
