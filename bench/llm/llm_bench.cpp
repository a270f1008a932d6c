// LLM client benchmark: N chat requests, K in flight, against the fake server running in a
// child process (so getrusage(RUSAGE_SELF) counts the client alone). Prints Markdown.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fake_llm_server.h"
#include "llm/request_pool.h"

using namespace kagent::llm;

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](timeval t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

// Forks the server before this process has any thread; returns its pid and port.
pid_t start_server(int threads, int& port, int& keepalive_fd) {
  int to_parent[2], from_parent[2];
  if (pipe(to_parent) != 0 || pipe(from_parent) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    close(to_parent[0]);
    close(from_parent[1]);
    {
      // Keep-alive outlasts the run: the client's pooled connections stay open, as against a real server.
      kagent::testing::FakeLlmServer server(threads, 60);
      int p = server.port();
      if (write(to_parent[1], &p, sizeof p) != sizeof p) _exit(1);
      char c;
      while (read(from_parent[0], &c, 1) > 0) {}  // until the parent closes its end (or dies)
    }
    _exit(0);
  }
  close(to_parent[1]);
  close(from_parent[0]);
  if (read(to_parent[0], &port, sizeof port) != sizeof port) throw std::runtime_error("server did not start");
  close(to_parent[0]);
  keepalive_fd = from_parent[1];
  return pid;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kagent LLM client benchmark"};
  int requests = 1000, in_flight = 64, server_threads = 96;
  bool no_stream = false;
  app.add_option("--requests", requests, "requests to send");
  app.add_option("--in-flight", in_flight, "concurrent requests");
  app.add_option("--server-threads", server_threads, "fake server worker threads");
  app.add_flag("--no-stream", no_stream, "ask for whole JSON answers instead of SSE streams");
  CLI11_PARSE(app, argc, argv);

  int port = 0, keepalive_fd = -1;
  pid_t server = start_server(server_threads, port, keepalive_fd);

  LlmConfig cfg;
  cfg.provider = "openai";
  cfg.base_url = fmt::format("http://127.0.0.1:{}/v1", port);
  cfg.model = "bench-model";
  cfg.stream = !no_stream;
  cfg.retry.max_attempts = 1;  // a failure must show, not hide behind a retry
  auto client = make_client(cfg);
  RequestPool pool(*client, in_flight);
  ChatRequest req{{{"user", "Write a CUDA kernel for ReLU."}}, "You are a kernel engineer.", {}};

  // Warm-up: opens keep-alive connections, as a long-running agent would have them.
  pool.run(std::vector<ChatRequest>(static_cast<size_t>(in_flight), req));

  std::vector<ChatRequest> reqs(static_cast<size_t>(requests), req);
  double cpu0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  auto out = pool.run(reqs);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = cpu_seconds() - cpu0;

  client.reset();  // closes the connections, so the server's keep-alive threads end at once
  close(keepalive_fd);
  int status = 0;
  waitpid(server, &status, 0);

  std::vector<double> lat;
  int failed = 0;
  long tokens = 0;
  std::string first_error;
  for (const auto& o : out) {
    if (!o.ok()) {
      if (first_error.empty()) first_error = o.error;
      ++failed;
      continue;
    }
    lat.push_back(o.response->latency_s);
    tokens += o.response->usage.completion_tokens;
  }
  double cpu_ms = 1000 * cpu / requests;
  fmt::print("# LLM client benchmark\n\n");
  fmt::print("`llm_bench --requests {} --in-flight {}{}` against the fake OpenAI-compatible server "
             "(separate process, 127.0.0.1), {} mode; machine: {} CPU cores.\n\n",
             requests, in_flight, no_stream ? " --no-stream" : "", no_stream ? "whole-JSON" : "SSE streaming",
             std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  fmt::print("| metric | value |\n|---|---|\n");
  fmt::print("| requests | {} ({} failed) |\n", requests, failed);
  fmt::print("| in flight | {} |\n", in_flight);
  fmt::print("| wall time | {:.3f} s |\n", wall);
  fmt::print("| requests per second | {:.0f} |\n", requests / wall);
  fmt::print("| client CPU (user+sys) | {:.3f} s |\n", cpu);
  fmt::print("| client CPU per request | {:.3f} ms (target < 1 ms) |\n", cpu_ms);
  fmt::print("| latency p50 / p99 / max | {:.1f} / {:.1f} / {:.1f} ms |\n", 1000 * percentile(lat, 0.5),
             1000 * percentile(lat, 0.99), 1000 * percentile(lat, 1.0));
  fmt::print("| completion tokens streamed | {} |\n", tokens);
  if (!first_error.empty()) fmt::print("\nfirst error: {}\n", first_error);
  return failed == 0 && cpu_ms < 1.0 ? 0 : 1;
}
