// The real `kagent solve` binary: a run killed in the middle of a turn and resumed loses
// nothing and repeats nothing; bad input gets one clear line and its own exit status.
// Answers here carry no code (format errors), so no GPU and no nvcc time is needed.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "common/files.h"
#include "fake_llm_server.h"
#include "llm_server_util.h"
#include "llm_test_util.h"

using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

struct Run {
  int status = -1;
  std::string out, err;
};


bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Starts kagent with exactly `env` (plus HOME and PATH) in `cwd`; returns its pid.
pid_t spawn_kagent(const std::vector<std::string>& args, std::vector<std::string> env, const std::string& cwd,
                   const std::string& out, const std::string& err) {
  env.push_back("HOME=" + cwd);
  env.push_back("KAGENT_CACHE_DIR=" + cwd + "/cache");
  if (const char* path = std::getenv("PATH")) env.push_back(std::string("PATH=") + path);
  std::vector<std::string> argv = {std::string(KAGENT_BINARY_DIR) + "/kagent"};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);
    dup2(o, 1), dup2(e, 2), dup2(in, 0);
    std::vector<char*> av, ev;
    for (auto& a : argv) av.push_back(a.data());
    for (auto& v : env) ev.push_back(v.data());
    av.push_back(nullptr), ev.push_back(nullptr);
    setpgid(0, 0);  // its own group: a kill takes its worker along
    execve(av[0], av.data(), ev.data());
    _exit(127);
  }
  return pid;
}

Run wait_kagent(pid_t pid, const std::string& out, const std::string& err) {
  int ws = 0;
  waitpid(pid, &ws, 0);
  Run r;
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  r.out = kagent::read_file(out);
  r.err = kagent::read_file(err);
  return r;
}

Run run_kagent(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& cwd) {
  std::string out = cwd + "/out.txt", err = cwd + "/err.txt";
  return wait_kagent(spawn_kagent(args, env, cwd, out, err), out, err);
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
  std::string out = dir.path() + "/out1", err = dir.path() + "/err1";
  pid_t pid = spawn_kagent(args, {}, dir.path(), out, err);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (server.request_count() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(server.request_count() == 3);
  kill(-pid, SIGKILL);
  Run killed = wait_kagent(pid, out, err);
  CHECK(killed.status == 128 + SIGKILL);

  fs::path run = only_run(dir.path());
  CHECK(kagent::read_file((run / "trajectories.jsonl").string()).empty());  // the sample did not finish
  auto partial = nlohmann::json::parse(kagent::read_file((run / "partial" / "sample-0.json").string()));
  CHECK(partial["turns"].size() == 2);

  server.push(prose("turn three again, no code"));
  server.push(prose("turn four, no code"));
  Run resumed = run_kagent({"solve", "--resume", run.string(), "--api-key", "k", "--base-url", server.base_url()}, {},
                           dir.path());
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
  Run again = run_kagent({"solve", "--resume", run.string(), "--api-key", "k", "--base-url", server.base_url()}, {},
                         dir.path());
  CHECK(again.status == 1);
  CHECK(server.request_count() == 5);
  CHECK(count_lines(kagent::read_file((run / "trajectories.jsonl").string())) == 1);
}

TEST_CASE("bad input: one clear line and a distinct exit status") {
  TempDir dir;
  SUBCASE("no API key") {
    Run r = run_kagent({"solve", kProblem, "--model", "gpt-x"}, {}, dir.path());
    CHECK(r.status == 5);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "kagent solve: error:"));
    CHECK(has(r.err, "key"));
    CHECK_FALSE(fs::exists(dir.path() + "/runs"));  // nothing started
  }
  SUBCASE("unreachable server") {
    Run r = run_kagent({"solve", kProblem, "--model", "m", "--api-key", "k", "--max-attempts", "2", "--base-url",
                        "http://127.0.0.1:" + std::to_string(closed_port())},
                       {}, dir.path());
    INFO(r.err);
    CHECK(r.status == 6);
    CHECK(has(r.err, "kagent solve: sample 0 stopped: model failed on turn 1"));
    CHECK(has(r.out, "resume    kagent solve --resume"));  // nothing lost: the run can go on later
  }
  SUBCASE("a problem file that does not load") {
    std::string bad = dir.write("broken.py", "import torch\nclass Model(:\n");
    FakeLlmServer server;
    Run r = run_kagent({"solve", bad, "--model", "m", "--api-key", "k", "--base-url", server.base_url()}, {}, dir.path());
    CHECK(r.status == 4);
    CHECK(count_lines(r.err) == 1);
    CHECK(has(r.err, "cannot load problem"));
    CHECK(server.request_count() == 0);
  }
  SUBCASE("a missing problem file") {
    Run r = run_kagent({"solve", dir.path() + "/nope.py", "--model", "m", "--api-key", "k"}, {}, dir.path());
    CHECK(r.status == 3);
    CHECK(count_lines(r.err) == 1);
  }
  SUBCASE("--resume of a folder that holds no run") {
    fs::create_directories(dir.path() + "/empty");
    Run r = run_kagent({"solve", "--resume", dir.path() + "/empty", "--api-key", "k"}, {}, dir.path());
    CHECK(r.status == 7);
    CHECK(count_lines(r.err) == 1);
  }
  SUBCASE("neither a problem nor --resume") {
    Run r = run_kagent({"solve"}, {}, dir.path());
    CHECK(r.status == 2);
  }
}
