// `kagent collect` orchestrator benchmark: P problems x S samples x T turns, all samples in
// progress at once (--concurrency), against the fake OpenAI-compatible server (a child process
// on 127.0.0.1 that answers at once) with compile-only evaluation (real nvcc through the compile
// cache, the worker checks every answer). A first, unmeasured collection of one problem fills
// the compile cache, so the measured run is the orchestrator's own work, not nvcc's. The kagent
// process is sampled every 50 ms from /proc: CPU (user+sys, its own threads, not its children),
// peak resident memory and thread count; the worker's CPU is read the same way. Prints Markdown.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collect_fixtures.h"
#include "common/files.h"
#include "fake_llm_server.h"
#include "kagent_process.h"

namespace fs = std::filesystem;
using namespace kagent::testing;

namespace {

// Forks the server before this process has any thread; returns its pid and port. The server
// lives until the parent closes `keepalive_fd` (or dies).
pid_t start_server(int threads, const std::string& answer, int& port, int& keepalive_fd) {
  int to_parent[2], from_parent[2];
  if (pipe(to_parent) != 0 || pipe(from_parent) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    close(to_parent[0]);
    close(from_parent[1]);
    {
      FakeLlmServer server(threads, 60);
      Script s;
      s.text = answer;
      server.set_default(s);
      const int p = server.port();
      if (write(to_parent[1], &p, sizeof p) != sizeof p) _exit(1);
      char c;
      while (read(from_parent[0], &c, 1) > 0) {}
    }
    _exit(0);
  }
  close(to_parent[1]);
  close(from_parent[0]);
  if (read(to_parent[0], &port, sizeof port) != sizeof port) throw std::runtime_error("the fake server did not start");
  close(to_parent[0]);
  keepalive_fd = from_parent[1];
  return pid;
}

// /proc/PID/stat: user+sys seconds of the process's own threads, and its thread count.
struct ProcStat {
  double cpu_s = 0;
  int threads = 0;
  bool ok = false;
};
ProcStat proc_stat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return {};
  std::istringstream rest(text.substr(close_paren + 2));
  std::vector<std::string> f((std::istream_iterator<std::string>(rest)), {});
  if (f.size() < 18) return {};
  // Fields after the name, from 0: state(0) ... utime(11) stime(12) ... num_threads(17).
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return {(std::stod(f[11]) + std::stod(f[12])) / tick, std::stoi(f[17]), true};
}

// A line of /proc/PID/status in kB ("VmHWM", "VmRSS"); 0 when absent.
double status_kb(pid_t pid, const std::string& key) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1));
  return 0;
}

// The direct children of `pid` (every thread's), by /proc/PID/task/*/children.
std::vector<pid_t> children(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& t : fs::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
    std::ifstream in(t.path() / "children");
    for (pid_t c; in >> c;) out.push_back(c);
  }
  return out;
}

std::string comm(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string s;
  std::getline(in, s);
  return s;
}

struct Sampled {
  double cpu_s = 0, peak_rss_mb = 0, worker_cpu_s = 0, worker_peak_rss_mb = 0;
  int peak_threads = 0;
};

// Samples `pid` (and its worker child) every 50 ms until `stop`.
void sample(pid_t pid, const std::atomic<bool>& stop, Sampled& s) {
  std::vector<pid_t> workers;
  while (!stop) {
    const ProcStat st = proc_stat(pid);
    if (st.ok) {
      s.cpu_s = st.cpu_s;
      s.peak_threads = std::max(s.peak_threads, st.threads);
      s.peak_rss_mb = std::max(s.peak_rss_mb, status_kb(pid, "VmHWM") / 1024);
    }
    for (pid_t c : children(pid))
      if (std::find(workers.begin(), workers.end(), c) == workers.end() && comm(c).rfind("kagent-worker", 0) == 0)
        workers.push_back(c);
    for (pid_t w : workers) {
      const ProcStat ws = proc_stat(w);
      if (ws.ok) s.worker_cpu_s = ws.cpu_s;  // one worker: compile-only runs one
      s.worker_peak_rss_mb = std::max(s.worker_peak_rss_mb, status_kb(w, "VmHWM") / 1024);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kagent collect orchestrator benchmark (zero-latency model server, compile-only evaluation)"};
  int problems = 500, samples = 2, turns = 2, concurrency = 1000, in_flight = 64, server_threads = 64;
  app.add_option("--problems", problems, "problems in the suite");
  app.add_option("--samples", samples, "samples per problem");
  app.add_option("--turns", turns, "turns per sample");
  app.add_option("--concurrency", concurrency, "samples in progress at once (kagent collect --concurrency)");
  app.add_option("--in-flight", in_flight, "model requests in flight (kagent collect --max-in-flight)");
  app.add_option("--server-threads", server_threads, "fake server worker threads");
  CLI11_PARSE(app, argc, argv);

  // Every answer is the same kernel, which compiles: the compile cache serves all but the first
  // of each (sample, turn) file name, which the warm-up run builds.
  const std::string answer = tiny_kernel_answer("v > 0.f ? v : 0.f");
  int port = 0, keepalive_fd = -1;
  const pid_t server = start_server(server_threads, answer, port, keepalive_fd);

  TempDir dir("kagent-collect-bench");
  for (int i = 1; i <= problems; ++i)
    dir.write(fmt::format("suite/level1/{}_scaled_relu.py", i), tiny_problem(fmt::format("torch.relu(x) * {}", i)));
  dir.write("warm/level1/1_scaled_relu.py", tiny_problem("torch.relu(x)"));
  auto args = [&](const std::string& suite, const std::string& out) {
    return std::vector<std::string>{"collect", dir.str() + "/" + suite, "-n", std::to_string(samples), "-t",
                                    std::to_string(turns), "--compile-only", "--out", dir.str() + "/" + out,
                                    "--concurrency", std::to_string(concurrency), "--max-in-flight",
                                    std::to_string(in_flight), "--base-url", fmt::format("http://127.0.0.1:{}/v1", port),
                                    "--model", "bench-model", "--api-key", "k"};
  };
  const std::vector<std::string> env = {"KAGENT_CACHE_DIR=" + dir.str() + "/cache"};

  const auto w0 = std::chrono::steady_clock::now();
  const KagentRun warm = run_kagent(args("warm", "warm-out"), env, dir.str());
  const double warm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  if (warm.status != 0) {
    fmt::print(stderr, "collect_bench: the warm-up collection failed (status {}):\n{}\n", warm.status, warm.err);
    close(keepalive_fd);
    waitpid(server, nullptr, 0);
    return 1;
  }

  const auto t0 = std::chrono::steady_clock::now();
  KagentProcess proc = spawn_kagent(args("suite", "run"), env, dir.str());
  std::atomic<bool> stop{false};
  Sampled s;
  std::thread sampler(sample, proc.pid, std::cref(stop), std::ref(s));
  const KagentRun run = proc.wait();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stop = true;
  sampler.join();
  close(keepalive_fd);
  waitpid(server, nullptr, 0);

  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(kagent::read_file(dir.path() / "run" / "summary.json"));
  } catch (const std::exception& e) {
    fmt::print(stderr, "collect_bench: no summary.json ({}); kagent said:\n{}\n", e.what(), run.err);
    return 1;
  }
  const int total = problems * samples;
  const int64_t evaluations = summary.value("evaluations", int64_t{0});
  fmt::print("# kagent collect: the orchestrator at {} concurrent samples\n\n", concurrency);
  fmt::print("`collect_bench --problems {} --samples {} --turns {} --concurrency {} --in-flight {}`: a suite of {} tiny "
             "problems x {} samples x {} turns, every sample in progress at once, against the fake OpenAI-compatible "
             "server (a separate process on 127.0.0.1, no latency, SSE streaming), compile-only evaluation (the "
             "compile cache filled by an unmeasured warm-up run of {:.0f} s). Machine: {} CPU cores.\n\n",
             problems, samples, turns, concurrency, in_flight, problems, samples, turns, warm_s,
             std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  fmt::print("| metric | value |\n|---|---|\n");
  fmt::print("| exit status | {} |\n", run.status);
  fmt::print("| samples recorded | {} of {} |\n", summary.value("samples_done", 0), total);
  fmt::print("| evaluations (worker requests) | {} |\n", evaluations);
  fmt::print("| wall time | {:.1f} s |\n", wall);
  fmt::print("| samples per second | {:.1f} |\n", total / wall);
  fmt::print("| turns per second | {:.1f} |\n", static_cast<double>(total) * turns / wall);
  fmt::print("| orchestrator CPU (user+sys, kagent's own threads) | {:.2f} s ({:.0f}% of one core) |\n", s.cpu_s,
             100 * s.cpu_s / wall);
  fmt::print("| orchestrator CPU per turn | {:.2f} ms |\n", 1000 * s.cpu_s / (static_cast<double>(total) * turns));
  fmt::print("| orchestrator peak resident memory | {:.0f} MB ({:.0f} kB per sample) |\n", s.peak_rss_mb,
             1024 * s.peak_rss_mb / total);
  fmt::print("| orchestrator peak threads | {} |\n", s.peak_threads);
  fmt::print("| worker CPU / peak resident memory | {:.2f} s / {:.0f} MB |\n", s.worker_cpu_s, s.worker_peak_rss_mb);
  if (run.status != 0) fmt::print(stderr, "collect_bench: kagent collect exited {}:\n{}\n", run.status, run.err);
  return run.status == 0 && summary.value("samples_done", 0) == total ? 0 : 1;
}
