// `kagent eval` and its compiler processes: a compile that runs past a limit is a compile
// error naming the limit, and a kagent killed in the middle of a compile (SIGKILL or SIGTERM)
// leaves no nvcc, cicc, cudafe++, cc1plus or ptxas behind. Real nvcc, no GPU needed.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/subprocess.h"
#include "relu_problem.h"
#include "result/exit_status.h"
#include "temp_dir.h"

using namespace kagent;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const char* kKernel = R"cu(#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
)cu";

struct Files {
  testing::TempDir dir{"kagent-compile-limits"};
  std::string problem = write("relu.py", test::kReluProblem);
  std::string kernel = write("relu.cu", kKernel);

  std::string write(const std::string& name, const char* text) {
    std::ofstream(dir.path() / name) << text;
    return (dir.path() / name).string();
  }
  SpawnOptions eval(std::vector<std::string> env) const {
    SpawnOptions so;
    so.argv = {KAGENT_BINARY_DIR "/kagent", "eval", problem, kernel, "--json", "--no-compile-cache", "--cache-dir",
               (dir.path() / "cache").string()};
    so.env_set = std::move(env);
    // A kagent killed here leaves its worker's log (and torch's scratch) in its TMPDIR: the
    // test's own folder, removed with it.
    fs::create_directories(dir.path() / "tmp");
    so.env_set.push_back("TMPDIR=" + (dir.path() / "tmp").string());
    return so;
  }
};

nlohmann::json json_of(const RunResult& r) {
  auto start = r.output.find('{');
  REQUIRE_MESSAGE(start != std::string::npos, r.output);
  return nlohmann::json::parse(r.output.substr(start));
}

// One process as /proc shows it.
struct Proc {
  pid_t pid = 0, ppid = 0, pgrp = 0;
  std::string name;
  char state = '?';
};

std::vector<Proc> processes() {
  std::vector<Proc> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    Proc p;
    p.pid = std::stoi(pid);
    p.name = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 2));
    rest >> p.state >> p.ppid >> p.pgrp;
    out.push_back(p);
  }
  return out;
}

// kagent's descendants (living ones), by walking parent links.
std::vector<Proc> descendants(pid_t root) {
  auto all = processes();
  std::multimap<pid_t, const Proc*> kids;
  for (const auto& p : all) kids.emplace(p.ppid, &p);
  std::vector<Proc> out;
  std::vector<pid_t> stack{root};
  while (!stack.empty()) {
    pid_t pid = stack.back();
    stack.pop_back();
    auto [lo, hi] = kids.equal_range(pid);
    for (auto it = lo; it != hi; ++it) {
      if (it->second->state != 'Z') out.push_back(*it->second);
      stack.push_back(it->second->pid);
    }
  }
  return out;
}

const std::set<std::string> kCompilers = {"nvcc", "cicc", "cudafe++", "cc1plus", "ptxas", "gcc", "g++", "fatbinary"};

bool is_compiler(const Proc& p) { return kCompilers.count(p.name) > 0; }

// Living processes in one of `groups` (the guards lead one group per compiler command, and
// everything nvcc starts stays in it).
std::vector<Proc> alive_in(const std::set<pid_t>& groups) {
  std::vector<Proc> out;
  for (const auto& p : processes())
    if (p.state != 'Z' && groups.count(p.pgrp)) out.push_back(p);
  return out;
}

void kill_during_compile(int signal) {
  Files f;
  Subprocess kagent(f.eval({}));
  // Wait until a compiler runs under kagent, then note every process group under it.
  std::set<pid_t> groups;
  std::set<pid_t> worker_pids;
  const auto deadline = std::chrono::steady_clock::now() + 240s;
  while (true) {
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "no compiler process appeared under kagent");
    REQUIRE_MESSAGE(kagent.running(), "kagent ended before its compile could be interrupted");
    bool compiling = false;
    for (const auto& p : descendants(kagent.pid())) {
      compiling = compiling || (is_compiler(p) && p.name != "nvcc");
      if (is_compiler(p)) groups.insert(p.pgrp);
      if (p.name == "kagent-worker") worker_pids.insert(p.pid);
    }
    if (compiling) break;
    std::this_thread::sleep_for(20ms);
  }
  groups.erase(kagent.pid());  // kagent's own group: only its worker lives there
  REQUIRE_FALSE(groups.empty());
  MESSAGE("killing kagent with signal " << signal << " while compiling; compiler groups: " << groups.size());
  REQUIRE(::kill(kagent.pid(), signal) == 0);  // kagent alone, as a user's kill or the OOM killer would
  auto exit = kagent.wait(30s);
  REQUIRE(exit);
  CHECK(exit->signaled);

  std::vector<Proc> left;
  for (int i = 0; i < 500; ++i) {  // up to 5 s for the kernel to deliver the parent-death signals
    left = alive_in(groups);
    if (left.empty()) break;
    std::this_thread::sleep_for(10ms);
  }
  for (const auto& p : left) MESSAGE("left behind: " << p.pid << " " << p.name);
  CHECK(left.empty());
  // The worker goes too (it ends on its closed pipes).
  for (int i = 0; i < 1000 && !worker_pids.empty(); ++i) {
    for (auto it = worker_pids.begin(); it != worker_pids.end();)
      it = ::kill(*it, 0) != 0 ? worker_pids.erase(it) : std::next(it);
    std::this_thread::sleep_for(10ms);
  }
  CHECK(worker_pids.empty());
}

// `env` sets a limit the compile runs into; the verdict is a compile error naming it.
void check_limit(const std::string& env, const std::string& limit, const std::string& described) {
  Files f;
  RunResult r = run_command(f.eval({env}), 300s);
  nlohmann::json j = json_of(r);
  INFO(r.output.substr(0, 4000));
  CHECK(j["status"] == "compile_error");
  CHECK(r.exit.code == exit_status::kCompileError);
  CHECK(j["compile"]["limit"] == limit);
  CHECK(j["reason"] == limit);
  CHECK(j["compile"]["errors"].get<std::string>().find(described) != std::string::npos);
  CHECK(j["compile"]["seconds"].get<double>() < 60);
}

}  // namespace

TEST_CASE("a compile past compile_timeout is a compile error naming the limit") {
  check_limit("KAGENT_COMPILE_TIMEOUT=2", "compile_timeout", "compile_timeout (2 s)");
}

TEST_CASE("a compiler process past compile_memory is a compile error naming the limit") {
  // Far below what cudafe++ needs for the ATen headers (about 1 GB): it runs out at once.
  check_limit("KAGENT_COMPILE_MEMORY_MB=400", "compile_memory", "compile_memory (400 MiB");
}

TEST_CASE("kagent killed with SIGKILL during a compile leaves no compiler process") { kill_during_compile(SIGKILL); }

TEST_CASE("kagent killed with SIGTERM during a compile leaves no compiler process") { kill_during_compile(SIGTERM); }
