// The pool's draw process (evaluation/draw_ahead.h) with the real kagent-worker in its
// --draw-ahead mode, under the workers' sandbox, on a real KernelBench problem: it draws the
// trials a want() names into its folder, drops them when the last ticket goes, and leaves
// nothing behind (process, folder) when destroyed. No GPU: the drawer never uses one.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>
#include <string>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "common/files.h"
#include "evaluation/draw_ahead.h"
#include "evaluation/evaluation_pool.h"
#include "sandbox/cuda_probe.h"
#include "support/kernelbench_dir.h"
#include "support/temp_dir.h"
#include "worker/client/worker_client.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

int count_files(const std::string& folder, const std::string& ext) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ext) ++n;
  return n;
}

bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// Processes whose command line names `text`.
int processes_naming(const std::string& text) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string cmd = read_file_or_empty(e.path() / "cmdline");
    if (cmd.find(text) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("the draw process draws a named problem's trials once, keeps them for its next evaluation, and leaves nothing") {
  const std::string problem = fs::absolute(fs::path(kagent::testing::kernelbench_dir()) / "level2" / "55_Matmul_MaxPool_Sum_Scale.py").string();
  REQUIRE(fs::exists(problem));
  std::string folder;
  {
    DrawAheadOptions o;
    o.worker_path = default_worker_path();
    o.trials = 5;
    o.processes = 1;
    DrawAhead draws(o);
    folder = draws.folder();
    REQUIRE(!folder.empty());
    {
      DrawAhead::Ticket first(&draws, problem);
      DrawAhead::Ticket second(&draws, problem);  // a second answer of the same problem: drawn once
      // The drawer starts Python and torch under the sandbox first: seconds on a busy machine.
      CHECK(wait_until([&] { return count_files(folder, ".draw") == 5; }, std::chrono::seconds(180)));
      CHECK(wait_until([&] { return draws.counters().drawn == 1; }, std::chrono::seconds(10)));
      const DrawAheadCounters c = draws.counters();
      CHECK(c.asked == 1);
      CHECK(c.running);
      CHECK(c.bytes >= 5 * 16 * (int64_t{1} << 20));  // 16 MiB of inputs a trial
    }
    // The last ticket gone: the draws stay while there is room, and the next evaluation of the
    // problem (a solve's next turn, a server's next request) takes them again, nothing drawn.
    {
      DrawAhead::Ticket again(&draws, problem);
      CHECK(wait_until([&] { return draws.counters().kept == 1; }, std::chrono::seconds(30)));
      CHECK(draws.counters().drawn == 1);
      CHECK(count_files(folder, ".draw") == 5);
    }
    CHECK(processes_naming(folder) >= 1);  // the drawer (and its sandbox's monitor)
  }
  CHECK(!fs::exists(folder));
  CHECK(wait_until([&] { return processes_naming(folder) == 0; }, std::chrono::seconds(10)));
}

TEST_CASE("the pool draws ahead where workers run trials, and not with KAGENT_DRAW_AHEAD=0 or without a GPU") {
  EvaluationSettings s;
  s.workers_per_gpu = 1;
  if (!sandbox::gpu_nodes_present()) {  // no NVIDIA device nodes: no trials run here, nothing drawn
    EvaluationPool pool(s);
    CHECK(pool.draw_ahead() == nullptr);
    return;
  }
  {
    EvaluationPool pool(s);
    REQUIRE(pool.draw_ahead() != nullptr);
    CHECK(fs::exists(pool.draw_ahead()->folder()));  // one process by default
    CHECK(pool.draw_ahead()->folder().find(':') == std::string::npos);
  }
  ::setenv("KAGENT_DRAW_AHEAD", "2", 1);
  {
    EvaluationPool pool(s);
    REQUIRE(pool.draw_ahead() != nullptr);
    const std::string folders = pool.draw_ahead()->folder();  // two processes, a folder each
    const auto colon = folders.find(':');
    REQUIRE(colon != std::string::npos);
    CHECK(fs::exists(folders.substr(0, colon)));
    CHECK(fs::exists(folders.substr(colon + 1)));
  }
  ::setenv("KAGENT_DRAW_AHEAD", "0", 1);
  {
    EvaluationPool pool(s);
    CHECK(pool.draw_ahead() == nullptr);
  }
  ::unsetenv("KAGENT_DRAW_AHEAD");
  s.hide_gpus = true;
  EvaluationPool hidden(s);
  CHECK(hidden.draw_ahead() == nullptr);
}

TEST_CASE("KAGENT_DRAW_AHEAD: a count from 0 to 16, the default when unset, nothing else") {
  CHECK(parse_draw_processes(nullptr) == kDefaultDrawProcesses);
  CHECK(parse_draw_processes("") == kDefaultDrawProcesses);
  CHECK(parse_draw_processes("0") == 0);
  CHECK(parse_draw_processes("2") == 2);
  CHECK(parse_draw_processes("16") == 16);
  for (const char* bad : {"-1", "17", "two", "1.5", " 1", "100"}) CHECK_MESSAGE(!parse_draw_processes(bad), bad);
}

TEST_CASE("a draw process stuck in a problem's get_inputs() is killed after its bound; the pool goes on") {
  const testing::TempDir dir("kagent-draw-stuck");
  const std::string problem = (dir.path() / "stuck.py").string();
  write_file_atomic(problem,
                    "import time, torch\n"
                    "class Model(torch.nn.Module):\n"
                    "    def forward(self, x):\n"
                    "        return x\n"
                    "def get_inputs():\n"
                    "    time.sleep(600)\n"
                    "    return [torch.randn(4)]\n"
                    "def get_init_inputs():\n"
                    "    return []\n");
  DrawAheadOptions o;
  o.worker_path = default_worker_path();
  o.processes = 1;
  o.stuck_after = std::chrono::seconds(3);
  DrawAhead draws(o);
  const std::string folder = draws.folder();
  // Started and ready first (its start-up is not a draw).
  REQUIRE(wait_until([&] { return draws.counters().running == 1; }, std::chrono::seconds(180)));
  {
    DrawAhead::Ticket t(&draws, problem);
    CHECK(wait_until([&] { return draws.counters().running == 0; }, std::chrono::seconds(30)));
    CHECK(draws.counters().ended.find("killed: no draw answered in 3 s") != std::string::npos);
    CHECK(wait_until([&] { return processes_naming(folder) == 0; }, std::chrono::seconds(10)));
  }
  DrawAhead::Ticket after(&draws, problem);  // nothing left to ask: a no-op, no hang
  CHECK(draws.counters().asked == 2);
}

TEST_CASE("hundreds of problems named at once are all answered: the pipes never fill both ways") {
  DrawAheadOptions o;
  o.worker_path = default_worker_path();
  o.processes = 1;
  DrawAhead draws(o);
  REQUIRE(wait_until([&] { return draws.counters().running == 1; }, std::chrono::seconds(180)));
  // 600 requests of ~300 bytes each: more than a pipe holds each way, every one answered at once
  // (no such file), while more are still being written.
  std::vector<std::unique_ptr<DrawAhead::Ticket>> tickets;
  const std::string padding(240, 'x');
  for (int i = 0; i < 600; ++i)
    tickets.push_back(std::make_unique<DrawAhead::Ticket>(&draws, fmt::format("/nonexistent/{}/{}.py", padding, i)));
  CHECK(wait_until([&] { return draws.counters().skipped == 600; }, std::chrono::seconds(120)));
  CHECK(draws.counters().running == 1);
}
