// Load on a real `kagent serve` over loopback: C clients at once, each running episodes of T
// turns (every answer a kernel that compiles, so each step is a compile-cache lookup and a
// worker round trip; with --gpu, a real evaluation: correctness, timing, profile) until S steps
// are done in all. Checks that no episode is
// lost or mixed up (every recorded step is the one its client got, in order) and reports step
// latency p50/p99 and throughput.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "collect_fixtures.h"
#include "serve_process.h"
#include "temp_dir.h"

using namespace kagent::testing;
using nlohmann::json;

int main(int argc, char** argv) {
  int clients = 64, steps = 2000, turns = 4, workers = 2;
  bool on_gpu = false;
  CLI::App app{"kagent serve load test on loopback (compile-only evaluation)"};
  app.add_option("--clients", clients)->capture_default_str();
  app.add_option("--steps", steps)->capture_default_str();
  app.add_option("--turns", turns, "steps per episode")->capture_default_str();
  app.add_option("--workers", workers, "evaluation workers (one per GPU index 0..N-1 with --gpu)")->capture_default_str();
  app.add_flag("--gpu", on_gpu, "evaluate on the GPU(s) for real instead of compile-only");
  CLI11_PARSE(app, argc, argv);

  TempDir dir("kagent-serve-load");
  write_tiny_suite(dir, "suite");
  std::string gpus;
  for (int i = 0; i < workers; ++i) gpus += (i ? "," : "") + std::to_string(i);
  const std::string token = "load-token";
  std::vector<std::string> flags = {"--gpus", gpus};
  // On the GPU: eager is timed per problem, torch.compile's minute of compiling is left out.
  if (on_gpu) flags.push_back("--no-compile-baseline");
  ServeProcess server(dir.str(), dir.str() + "/data", dir.str() + "/suite", token, flags,
                      {"KAGENT_CACHE_DIR=" + dir.str() + "/cache"}, on_gpu);
  if (!server.wait_ready()) {
    std::cerr << "serve_load: the server did not start:\n" << server.stderr_text();
    return 1;
  }
  const std::vector<std::string> tasks = {"1_relu", "2_double", "1_relu_double"};
  const std::string answer = tiny_kernel_answer("v > 0.f ? v : 0.f");
  {  // one warm step: the kernel's single nvcc run is not what is measured
    auto c = server.client(token);
    auto r = c->Post("/v1/episodes", json{{"task_id", "1_relu"}, {"max_turns", 1}}.dump(), "application/json");
    const std::string id = body_of(r)["episode_id"];
    c->Post(("/v1/episodes/" + id + "/step").c_str(), json{{"action", {{"text", answer}}}, {"request_id", "w"}}.dump(),
            "application/json");
  }

  std::atomic<int> next_step{0};
  std::atomic<int> errors{0};
  std::mutex mu;
  std::vector<double> latencies;
  struct Episode { std::string id; std::vector<json> responses; };
  std::vector<Episode> episodes;
  const auto start = std::chrono::steady_clock::now();
  auto run_client = [&](int k) {
    auto c = server.client(token);
    std::vector<double> mine;
    std::vector<Episode> my_episodes;
    for (int e = 0;; ++e) {
      if (next_step.load() >= steps) break;
      auto r = c->Post("/v1/episodes", json{{"task_id", tasks[static_cast<size_t>(k + e) % tasks.size()]}, {"max_turns", turns}}.dump(),
                       "application/json");
      if (!r || r->status != 200) { ++errors; continue; }
      Episode ep{body_of(r)["episode_id"], {}};
      for (int t = 0; t < turns; ++t) {
        if (next_step.fetch_add(1) >= steps) break;
        const json body = {{"action", {{"text", answer}}}, {"request_id", fmt::format("c{}-e{}-t{}", k, e, t)}};
        const auto t0 = std::chrono::steady_clock::now();
        auto s = c->Post(("/v1/episodes/" + ep.id + "/step").c_str(), body.dump(), "application/json");
        mine.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        const json b = body_of(s);
        if (!s || s->status != 200 || b["episode_id"] != ep.id || b["metadata"]["turn"] != t) { ++errors; break; }
        ep.responses.push_back(b);
      }
      my_episodes.push_back(std::move(ep));
    }
    std::lock_guard lock(mu);
    latencies.insert(latencies.end(), mine.begin(), mine.end());
    for (auto& ep : my_episodes) episodes.push_back(std::move(ep));
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < clients; ++k) threads.emplace_back(run_client, k);
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Every episode as the server recorded it equals what its client was answered, in order.
  int lost = 0, mixed = 0, recorded = 0;
  auto c = server.client(token);
  for (const auto& ep : episodes) {
    const json got = body_of(c->Get(("/v1/episodes/" + ep.id).c_str()));
    if (!got.is_object() || !got.contains("steps")) { ++lost; continue; }
    if (got["steps"].size() != ep.responses.size()) ++lost;
    for (size_t i = 0; i < std::min(got["steps"].size(), ep.responses.size()); ++i, ++recorded)
      if (got["steps"][i]["response"] != ep.responses[i]) ++mixed;
  }
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) { return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, static_cast<size_t>(p * latencies.size()))]; };
  const json metrics_line = {{"clients", clients}, {"steps", latencies.size()}, {"episodes", episodes.size()}, {"workers", workers},
                             {"wall_s", wall}, {"steps_per_s", latencies.size() / wall}, {"p50_ms", pct(0.50) * 1000},
                             {"p99_ms", pct(0.99) * 1000}, {"max_ms", latencies.empty() ? 0 : latencies.back() * 1000},
                             {"errors", errors.load()}, {"lost_episodes", lost}, {"mixed_steps", mixed}, {"steps_checked", recorded}};
  std::cout << fmt::format("{} clients, {} steps in {} episodes on {} {} workers: {:.1f} s, {:.1f} steps/s\n", clients,
                           latencies.size(), episodes.size(), workers, on_gpu ? "GPU" : "compile-only", wall,
                           latencies.size() / wall);
  std::cout << fmt::format("step latency p50 {:.1f} ms, p99 {:.1f} ms, max {:.1f} ms\n", pct(0.5) * 1000, pct(0.99) * 1000,
                           latencies.empty() ? 0.0 : latencies.back() * 1000);
  std::cout << fmt::format("errors {}, lost episodes {}, mixed-up steps {} (of {} checked)\n", errors.load(), lost, mixed, recorded);
  std::cout << metrics_line.dump() << "\n";
  if (auto m = c->Get("/metrics"))  // the server's own view: evaluations/s, GPU busy, latency histogram
    for (const char* key : {"kagent_serve_evaluations_total", "kagent_serve_evaluations_per_second", "kagent_serve_gpu_busy_ratio"})
      if (auto pos = m->body.find(std::string("\n") + key + " "); pos != std::string::npos)
        std::cout << m->body.substr(pos + 1, m->body.find('\n', pos + 1) - pos - 1) << "\n";
  return errors == 0 && lost == 0 && mixed == 0 && static_cast<int>(latencies.size()) == steps ? 0 : 1;
}
