// Load on a real `kagent serve` over loopback: C clients at once, each running episodes of T
// turns (every answer a kernel that compiles, so each step is a compile-cache lookup and a
// worker round trip; with --gpu, a real evaluation: correctness, timing, profile) until S steps
// are done in all. Checks that no episode is
// lost or mixed up (every recorded step is the one its client got, in order) and reports step
// latency p50/p99 and throughput.
//
// The suite is the tests' tiny one (three small elementwise problems, a CUDA answer), or, with
// --problems LIST --replay FILE, real problems (KernelBench at their official sizes) with the
// KernelBench-format answers of bench/collect/make_replay.py: turn t of an episode on a problem
// sends that problem's recorded answer of turn t (the last one past its end).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
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
namespace fs = std::filesystem;

namespace {

// A task the clients step through: its id on the server, its answers by turn, its format.
struct Task {
  std::string id;
  std::vector<std::string> answers;
  std::string format;
};

// The real problems of `list` (one absolute path a line, '#' comments) linked into `suite` as
// levelN/stem.py, each with the answers `replay` records for it (sample 0, by turn).
std::vector<Task> real_tasks(const std::string& list, const std::string& replay, const fs::path& suite) {
  std::map<std::string, std::map<int, std::string>> by_problem;
  std::ifstream rf(replay);
  if (!rf) throw std::runtime_error("cannot read " + replay);
  for (std::string line; std::getline(rf, line);) {
    if (line.empty()) continue;
    const json j = json::parse(line);
    if (j.value("sample", 0) == 0) by_problem[j.at("problem")][j.at("turn").get<int>()] = j.at("text");
  }
  std::ifstream lf(list);
  if (!lf) throw std::runtime_error("cannot read " + list);
  std::vector<Task> tasks;
  for (std::string line; std::getline(lf, line);) {
    if (line.empty() || line[0] == '#') continue;
    const fs::path p(line);
    const std::string stem = p.stem().string(), level = p.parent_path().filename().string();
    auto it = by_problem.find(stem);
    if (it == by_problem.end()) throw std::runtime_error("no answer in " + replay + " for " + stem);
    fs::create_directories(suite / level);
    fs::create_symlink(fs::absolute(p), suite / level / (stem + ".py"));
    Task t{level + "/" + stem, {}, "kernelbench"};
    for (const auto& [turn, text] : it->second) t.answers.push_back(text);
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) throw std::runtime_error("no problems in " + list);
  return tasks;
}

}  // namespace

int main(int argc, char** argv) {
  int clients = 64, steps = 2000, turns = 4, workers = 2;
  bool on_gpu = false;
  std::string problems, replay;
  CLI::App app{"kagent serve load test on loopback (compile-only evaluation)"};
  app.add_option("--clients", clients)->capture_default_str();
  app.add_option("--steps", steps)->capture_default_str();
  app.add_option("--turns", turns, "steps per episode")->capture_default_str();
  app.add_option("--workers", workers, "evaluation workers (one per GPU index 0..N-1 with --gpu)")->capture_default_str();
  app.add_flag("--gpu", on_gpu, "evaluate on the GPU(s) for real instead of compile-only");
  auto* problems_opt = app.add_option("--problems", problems, "a suite list of real problems (absolute paths) instead of the tiny suite")
                           ->check(CLI::ExistingFile);
  app.add_option("--replay", replay, "their answers: bench/collect/make_replay.py's replay.jsonl")
      ->check(CLI::ExistingFile)
      ->needs(problems_opt);
  problems_opt->needs(app.get_option("--replay"));
  CLI11_PARSE(app, argc, argv);

  TempDir dir("kagent-serve-load");
  std::vector<Task> tasks;
  try {
    if (problems.empty()) {
      write_tiny_suite(dir, "suite");
      const std::string kernel = tiny_kernel_answer("v > 0.f ? v : 0.f");
      for (const char* id : {"1_relu", "2_double", "1_relu_double"}) tasks.push_back({id, {kernel}, "cuda"});
    } else {
      tasks = real_tasks(problems, replay, fs::path(dir.str()) / "suite");
    }
  } catch (const std::exception& e) {
    std::cerr << "serve_load: error: " << e.what() << "\n";
    return 2;
  }
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
  if (problems.empty()) {  // one warm step: the tiny kernel's single nvcc run is not what is measured
    auto c = server.client(token);
    auto r = c->Post("/v1/episodes", json{{"task_id", "1_relu"}, {"max_turns", 1}}.dump(), "application/json");
    const std::string id = body_of(r)["episode_id"];
    c->Post(("/v1/episodes/" + id + "/step").c_str(), json{{"action", {{"text", tasks[0].answers[0]}}}, {"request_id", "w"}}.dump(),
            "application/json");
  }

  std::atomic<int> next_step{0};
  std::atomic<int> errors{0};
  std::mutex mu;
  std::vector<double> latencies;
  std::map<std::string, int> verdicts;  // status (reason) of every step
  std::map<std::string, std::string> example;  // the first message of each
  std::string first_error;
  struct Episode { std::string id; std::vector<json> responses; };
  std::vector<Episode> episodes;
  // Counts an error and keeps the first one's text (status and body, or why no reply came).
  auto fail = [&](const httplib::Result& r) {
    ++errors;
    std::lock_guard lock(mu);
    if (first_error.empty()) first_error = r ? fmt::format("{} {}", r->status, r->body) : httplib::to_string(r.error());
  };
  const auto start = std::chrono::steady_clock::now();
  auto run_client = [&](int k) {
    auto c = server.client(token);
    std::vector<double> mine;
    std::vector<Episode> my_episodes;
    for (int e = 0;; ++e) {
      if (next_step.load() >= steps) break;
      const Task& task = tasks[static_cast<size_t>(k + e * clients) % tasks.size()];
      auto r = c->Post("/v1/episodes", json{{"task_id", task.id}, {"format", task.format}, {"max_turns", turns}}.dump(),
                       "application/json");
      if (!r || r->status != 200) {  // the server refuses: say why once, and stop this client
        fail(r);
        break;
      }
      Episode ep{body_of(r)["episode_id"], {}};
      for (int t = 0; t < turns; ++t) {
        if (next_step.fetch_add(1) >= steps) break;
        const std::string& answer = task.answers[std::min(static_cast<size_t>(t), task.answers.size() - 1)];
        const json body = {{"action", {{"text", answer}}}, {"request_id", fmt::format("c{}-e{}-t{}", k, e, t)}};
        const auto t0 = std::chrono::steady_clock::now();
        auto s = c->Post(("/v1/episodes/" + ep.id + "/step").c_str(), body.dump(), "application/json");
        mine.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        const json b = body_of(s);
        if (!s || s->status != 200 || b["episode_id"] != ep.id || b["metadata"]["turn"] != t) {
          fail(s);
          break;
        }
        ep.responses.push_back(b);
      }
      my_episodes.push_back(std::move(ep));
    }
    std::lock_guard lock(mu);
    latencies.insert(latencies.end(), mine.begin(), mine.end());
    for (auto& ep : my_episodes) {
      for (const auto& b : ep.responses) {
        const json& m = b["metadata"];
        const std::string reason = m.value("reason", "");
        const std::string kind = m.value("status", "?") + (reason.empty() ? "" : " (" + reason + ")");
        ++verdicts[kind];
        example.emplace(kind, m.value("message", ""));
      }
      episodes.push_back(std::move(ep));
    }
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
  std::cout << fmt::format("{} clients, {} steps in {} episodes over {} {} on {} {} workers: {:.1f} s, {:.1f} steps/s\n", clients,
                           latencies.size(), episodes.size(), tasks.size(), problems.empty() ? "tiny problems" : "problems of " + problems,
                           workers, on_gpu ? "GPU" : "compile-only", wall, latencies.size() / wall);
  std::cout << fmt::format("step latency p50 {:.1f} ms, p99 {:.1f} ms, max {:.1f} ms\n", pct(0.5) * 1000, pct(0.99) * 1000,
                           latencies.empty() ? 0.0 : latencies.back() * 1000);
  std::cout << fmt::format("errors {}, lost episodes {}, mixed-up steps {} (of {} checked)\n", errors.load(), lost, mixed, recorded);
  if (!first_error.empty()) std::cout << "first error: " << first_error << "\n";
  std::string v;
  for (const auto& [k, n] : verdicts) v += fmt::format("{}{} {}", v.empty() ? "" : ", ", k, n);
  std::cout << "verdicts " << v << "\n";
  for (const auto& [k, msg] : example)
    std::cout << fmt::format("  {}: {}\n", k, msg.substr(0, 400));
  std::cout << metrics_line.dump() << "\n";
  if (auto m = c->Get("/metrics"))  // the server's own view: evaluations/s, GPU busy, latency histogram
    for (const char* key : {"kagent_serve_evaluations_total", "kagent_serve_evaluations_per_second", "kagent_serve_gpu_busy_ratio"})
      if (auto pos = m->body.find(std::string("\n") + key + " "); pos != std::string::npos)
        std::cout << m->body.substr(pos + 1, m->body.find('\n', pos + 1) - pos - 1) << "\n";
  return errors == 0 && lost == 0 && mixed == 0 && static_cast<int>(latencies.size()) == steps ? 0 : 1;
}
