// `kagent serve` refuses at start-up what would fail every request later, each with one line
// naming the flag and its own exit status: a port another server holds (5), a prompts folder
// that is not one, a suite folder without problems, GPU indices the machine does not have (3).
// Without a GPU and without --compile-only it says so: /health and every route that evaluates
// answer 503 no_gpu, never a verdict scored 0. A second server on a --data folder in use exits 7;
// --help says how many workers each GPU gets as the pool starts them. A burst of connections
// while the server cannot accept (a trainer's whole batch at once) all complete and are answered.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "collect_fixtures.h"
#include "serve/machine_gpus.h"
#include "sandbox/process_table.h"
#include "serve_process.h"
#include "temp_dir.h"

using namespace kagent::testing;
using nlohmann::json;

namespace {

// Runs kagent to its end, or kills it after `limit` (a server that should have refused to
// start but serves instead): status 137 then.
KagentRun run_limited(const std::vector<std::string>& args, const std::string& cwd,
                      std::chrono::seconds limit = std::chrono::seconds(120)) {
  KagentProcess p = spawn_kagent(args, {}, cwd);
  const auto end = std::chrono::steady_clock::now() + limit;
  int ws = 0;
  while (::waitpid(p.pid, &ws, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      ::kill(-p.pid, SIGKILL);
      ::waitpid(p.pid, &ws, 0);
      return {137, kagent::read_file(p.out), kagent::read_file(p.err)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws), kagent::read_file(p.out), kagent::read_file(p.err)};
}

void check_refused(const KagentRun& r, int status, const std::vector<std::string>& needles) {
  INFO(r.err);
  CHECK(r.status == status);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("kagent serve: error: ", 0) == 0);
  for (const auto& n : needles) CHECK_MESSAGE(has(r.err, n), "expected \"" << n << "\"");
  CHECK(r.err.find("listening") == std::string::npos);
}

httplib::Result post(httplib::Client& c, const std::string& path, const json& body) {
  return c.Post(path.c_str(), body.dump(), "application/json");
}

}  // namespace

TEST_CASE("a kagent a test did not wait for is killed, and what it started goes, when the test's handle goes") {
  TempDir dir("kagent-serve-scope");
  write_tiny_suite(dir, "suite");
  pid_t pid = -1;
  std::vector<pid_t> below;
  {
    // What a failed REQUIRE leaves behind: a running server with its workers, never waited for.
    KagentProcess p = spawn_kagent({"serve", "--data", dir.str() + "/data", "--problems", dir.str() + "/suite", "--port",
                                    "0", "--compile-only"},
                                   {}, dir.str());
    pid = p.pid;
    const auto file = dir.path() / "data" / "server.json";
    for (int i = 0; i < 1200 && !std::filesystem::exists(file); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE(std::filesystem::exists(file));
    below = kagent::sandbox::descendants_of(pid);
  }
  // kagent is gone and reaped, its process group empty.
  CHECK(::waitpid(pid, nullptr, WNOHANG) == -1);
  CHECK(::kill(-pid, 0) == -1);
  CHECK(errno == ESRCH);
  // What it started (its workers, in groups of their own) follows it within seconds.
  const auto gone = [](pid_t p) {
    const std::string stat = kagent::read_file_or_empty("/proc/" + std::to_string(p) + "/stat");
    const auto close = stat.rfind(')');
    return stat.empty() || close == std::string::npos || stat.substr(close + 2, 1) == "Z";
  };
  for (int i = 0; i < 300 && !std::all_of(below.begin(), below.end(), gone); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (pid_t p : below) CHECK_MESSAGE(gone(p), "pid " << p << " outlived its kagent");
}

TEST_CASE("a port another server holds: the second one exits 5 at once with one line, the first keeps all traffic") {
  TempDir dir("kagent-serve-port");
  write_tiny_suite(dir, "suite");
  ServeProcess first(dir.str(), dir.str() + "/data1", dir.str() + "/suite", "");
  REQUIRE_MESSAGE(first.wait_ready(), first.stderr_text());
  const std::string port = std::to_string(first.port());
  const auto start = std::chrono::steady_clock::now();
  const KagentRun second = run_limited({"serve", "--data", dir.str() + "/data2", "--problems", dir.str() + "/suite",
                                        "--port", port, "--compile-only"},
                                       dir.str(), std::chrono::seconds(60));
  check_refused(second, 5, {"127.0.0.1:" + port, "in use"});
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));  // before any worker started
  // Every request on the port reaches the first server.
  auto c = first.client();
  const std::string id = body_of(post(*c, "/v1/episodes", {{"task_id", "1_relu"}}))["episode_id"];
  for (int i = 0; i < 10; ++i) {
    auto r = c->Get(("/v1/episodes/" + id).c_str());
    REQUIRE(r);
    CHECK(r->status == 200);
  }
}

TEST_CASE("start-up refuses what every request would fail on: --prompts, --problems, --gpus (exit 3, one line)") {
  TempDir dir("kagent-serve-startup");
  write_tiny_suite(dir, "suite");
  dir.write("empty/.keep", "");
  dir.write("helpers/utils.py", "def helper():\n    return 1\n");
  dir.write("prompts-partial/task.txt", "{{name}}\n");
  const std::string data = dir.str() + "/data";
  auto serve = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"serve", "--data", data, "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_limited(args, dir.str());
  };
  SUBCASE("--prompts a folder that does not exist") {
    check_refused(serve({"--problems", dir.str() + "/suite", "--compile-only", "--prompts", "/nope"}), 3,
                  {"--prompts /nope", "no such folder"});
  }
  SUBCASE("--prompts a folder without the templates") {
    check_refused(serve({"--problems", dir.str() + "/suite", "--compile-only", "--prompts", dir.str() + "/prompts-partial"}),
                  3, {"--prompts " + dir.str() + "/prompts-partial", "system_cuda.txt"});
  }
  SUBCASE("--problems an empty folder, one without problems, one that does not exist") {
    check_refused(serve({"--problems", dir.str() + "/empty", "--compile-only"}), 3,
                  {"--problems " + dir.str() + "/empty", "no problem"});
    check_refused(serve({"--problems", dir.str() + "/helpers", "--compile-only"}), 3,
                  {"--problems " + dir.str() + "/helpers", "none a KernelBench problem"});
    check_refused(serve({"--problems", dir.str() + "/nowhere", "--compile-only"}), 3,
                  {"--problems " + dir.str() + "/nowhere", "no such folder"});
  }
  SUBCASE("--gpus an index this machine does not have") {
    const int gpus = kagent::serve::machine_gpu_count();
    check_refused(serve({"--problems", dir.str() + "/suite", "--gpus", std::to_string(gpus + 3)}), 3,
                  {"--gpus " + std::to_string(gpus + 3) + ": this machine has "});
  }
}

TEST_CASE("no GPU outside --compile-only: /health and every evaluating route answer 503 no_gpu, never reward 0") {
  if (kagent::serve::machine_gpu_count() > 0) {
    MESSAGE("this machine has a GPU: the no-GPU server is not seen here");
    return;
  }
  TempDir dir("kagent-serve-nogpu");
  write_tiny_suite(dir, "suite");
  ServeProcess server(dir.str(), dir.str() + "/data", dir.str() + "/suite", "", {}, {}, /*on_gpu=*/true);
  REQUIRE(server.wait_ready(std::chrono::seconds(60), /*port_only=*/true));
  auto c = server.client();
  json health;
  for (int i = 0; i < 1200; ++i) {
    auto r = c->Get("/health");
    if (r) {
      health = body_of(r);
      if (health["status"] != "starting") {
        CHECK(r->status == 503);
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(health.dump());
  CHECK(health["status"] == "no_gpu");
  CHECK(has(health["error"].get<std::string>(), "--compile-only"));
  const std::string code = tiny_kernel_answer("v > 0.f ? v : 0.f");
  for (auto [path, body] : {std::pair<std::string, json>{"/v1/episodes", {{"task_id", "1_relu"}}},
                            {"/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", code}}},
                            {"/v1/evaluate/batch", {{"requests", {{{"task_id", "1_relu"}, {"kernel_code", code}}}}}},
                            {"/v1/reward", {{"query", {code}}, {"labels", {"1_relu"}}}}}) {
    CAPTURE(path);
    auto r = post(*c, path, body);
    REQUIRE(r);
    CHECK(r->status == 503);
    CHECK(body_of(r)["error"]["code"] == "no_gpu");
    CHECK(r->get_header_value("Retry-After").empty());  // waiting does not bring a GPU
  }
  CHECK(has(server.stderr_text(), "no CUDA device is visible"));
}

TEST_CASE("one server per --data folder: a second one exits 7 with one line, the first keeps its episodes alone") {
  TempDir dir("kagent-serve-lock");
  write_tiny_suite(dir, "suite");
  const std::string data = dir.str() + "/data";
  // --format kernelbench: the answer format of requests that name none (OpenRLHF's /v1/reward).
  ServeProcess first(dir.str(), data, dir.str() + "/suite", "", {"--format", "kernelbench"});
  REQUIRE_MESSAGE(first.wait_ready(), first.stderr_text());
  const auto start = std::chrono::steady_clock::now();
  const KagentRun second = run_limited({"serve", "--data", data, "--problems", dir.str() + "/suite", "--port", "0",
                                        "--compile-only"},
                                       dir.str(), std::chrono::seconds(60));
  check_refused(second, 7, {"--data " + data, "another kagent serve", "pid ", "port " + std::to_string(first.port())});
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));  // before any worker started
  auto c = first.client();
  const std::string not_python = "```python\nclass ModelNew(:\n```\n";
  const json reward = body_of(post(*c, "/v1/reward", {{"query", {not_python}}, {"labels", {"1_relu"}}}));
  INFO(reward.dump());
  CHECK(reward["extra_logs"]["status"][0] == "runtime_error");  // read as Python: the server's --format
  CHECK(reward["rewards"][0] == 0.0);
  // The first server stopped, the folder is free again (the kernel dropped the lock).
  first.kill(SIGTERM);
  ServeProcess again(dir.str(), data, dir.str() + "/suite", "");
  REQUIRE_MESSAGE(again.wait_ready(), again.stderr_text());
}

TEST_CASE("serve --help: --workers-per-gpu workers on each GPU index, as the pool starts them, not one each") {
  TempDir dir("kagent-serve-help");
  const KagentRun help = run_limited({"serve", "--help"}, dir.str());
  INFO(help.out);
  CHECK(help.status == 0);
  CHECK_FALSE(has(help.out, "one worker each"));
  CHECK(has(help.out, "--workers-per-gpu workers on each"));
  CHECK(has(help.out, "2 to 4"));  // the default, as docs/serve.md says
  CHECK(has(help.out, "--format"));
}

TEST_CASE("a burst of 64 connections while the server is stopped: every one connects at once and is answered") {
  // httplib listens with a backlog of 5: the kernel then drops the other SYNs (the client tries
  // again after 1 s, 3 s, ...) and a burst got resets. A trainer sends its batch at once.
  TempDir dir("kagent-serve-burst");
  write_tiny_suite(dir, "suite");
  ServeProcess server(dir.str(), dir.str() + "/data", dir.str() + "/suite", "");
  REQUIRE_MESSAGE(server.wait_ready(), server.stderr_text());
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  constexpr int kBurst = 64;
  std::vector<kagent::Fd> socks;
  socks.reserve(kBurst);
  REQUIRE(::kill(server.pid(), SIGSTOP) == 0);  // the server process alone: nothing accepts
  for (int i = 0; i < kBurst; ++i) {
    socks.emplace_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    REQUIRE(socks.back().get() >= 0);
    const int rc = ::connect(socks.back().get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    REQUIRE((rc == 0 || errno == EINPROGRESS));
  }
  // The kernel completes each handshake into the accept queue; with a backlog of 5, 6 of them.
  int connected = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
  std::vector<bool> done(kBurst, false);
  while (connected < kBurst && std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < kBurst; ++i) {
      if (done[i]) continue;
      pollfd p{socks[i].get(), POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, 0) == 1 && ::getsockopt(socks[i].get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        done[i] = true;
        ++connected;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(::kill(server.pid(), SIGCONT) == 0);
  CHECK(connected == kBurst);
  // Each is answered.
  int answered = 0;
  const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  for (auto& s : socks) {
    const int fd = s.get();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) continue;
    char buf[64] = {};
    const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
    if (n > 0 && std::string(buf, static_cast<size_t>(n)).rfind("HTTP/1.1 200", 0) == 0) ++answered;
  }
  CHECK(answered == kBurst);
}

// A stop is bounded (Slurm allows KillWait, 30 s by default, between SIGTERM and SIGKILL): the
// work in flight may finish within --stop-grace; a second signal, or the grace's end, ends the
// server at once with exit 16 and one line, its workers and compilers with it. Found on the
// H200 x2: a node stopped by a deadline kept evaluating (64.9 GB of GPU memory still in use when
// the next run began).
TEST_CASE("a stop signal leaves the work in flight --stop-grace seconds; a second signal, or the grace, ends it (16)") {
  TempDir dir("kagent-serve-stop");
  write_tiny_suite(dir, "suite");
  const auto in_flight = [&](ServeProcess& server, std::thread& request) {
    REQUIRE_MESSAGE(server.wait_ready(), server.stderr_text());
    // A cold compile (no cache in the test's folder): seconds of nvcc on the CPU.
    request = std::thread([c = server.client()] {
      (void)post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", tiny_kernel_answer("v > 0.f ? v : 0.f")},
                                      {"format", "cuda"}, {"request_id", "stop-1"}});
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
  };
  // From the signal that ends it: exit 16 within seconds, the line naming why.
  const auto cut = [](ServeProcess& server, std::thread& request, const std::string& why) {
    const auto t0 = std::chrono::steady_clock::now();
    server.signal(SIGTERM);
    const auto status = server.wait_exit(std::chrono::seconds(10));
    request.join();
    REQUIRE(status);
    CHECK(*status == 16);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    CHECK_MESSAGE(has(server.stderr_text(), "kagent serve: stopped before its work in flight finished (" + why + ")"),
                  server.stderr_text());
  };
  SUBCASE("a second signal") {
    ServeProcess server(dir.str(), dir.str() + "/data-a", dir.str() + "/suite", "", {"--stop-grace", "120"});
    std::thread request;
    in_flight(server, request);
    server.signal(SIGTERM);
    CHECK_FALSE(server.wait_exit(std::chrono::milliseconds(300)));  // the compile in flight goes on
    cut(server, request, "a second signal");
  }
  SUBCASE("the grace runs out") {
    ServeProcess server(dir.str(), dir.str() + "/data-b", dir.str() + "/suite", "", {"--stop-grace", "1"});
    std::thread request;
    in_flight(server, request);
    cut(server, request, "--stop-grace 1 s ran out");
  }
  SUBCASE("nothing in flight: a signal stops it at once, exit 0") {
    ServeProcess server(dir.str(), dir.str() + "/data-c", dir.str() + "/suite", "", {"--stop-grace", "120"});
    REQUIRE_MESSAGE(server.wait_ready(), server.stderr_text());
    server.signal(SIGTERM);
    const auto status = server.wait_exit(std::chrono::seconds(10));
    REQUIRE(status);
    CHECK(*status == 0);
    CHECK_FALSE(has(server.stderr_text(), "stopped before"));
  }
}
