// The real `kagent solve` binary: a run killed in the middle of a turn and resumed loses
// nothing and repeats nothing; bad input gets one clear line and its own exit status.
// Answers here carry no code (format errors), so no GPU and no nvcc time is needed.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>
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
  const KagentProcess proc = spawn_kagent(args, {}, dir.str());
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
  }
}
