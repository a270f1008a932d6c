// The orchestrator's side of the sandbox: the memory watchdog, the baseline cache that only
// the orchestrator writes, the scratch folder's life, and the real worker's sandbox report.
#include <doctest/doctest.h>

#include <fstream>
#include <iostream>

#include "common/sha256.h"
#include "sandbox_test_util.h"
#include "worker/client/baseline_cache.h"
#include "worker/client/worker_client.h"

using namespace kagent;
using namespace std::chrono_literals;
using sandbox_test::TempDir;
namespace fs = std::filesystem;

namespace {
WorkerOptions fake_options(uint64_t memory_mib = 32 * 1024) {
  WorkerOptions o;
  o.worker_path = KAGENT_SANDBOX_FAKE_WORKER;
  o.request_timeout = 20s;
  o.start_timeout = 10s;
  sandbox::SandboxPolicy p;
  p.memory_bytes = memory_mib << 20;
  o.sandbox = p;
  return o;
}
EvalResult eval_with(WorkerClient& w, const std::string& what, const std::string& problem = "/dev/null",
                     const nlohmann::json& options = nlohmann::json::object()) {
  return w.evaluate(problem, CandidateRef{"cuda", what, "op", "", {}}, options);
}
}  // namespace

TEST_CASE("the memory watchdog kills a worker over the limit, and the next evaluation gets a fresh one") {
  for (const char* hog : {"hog", "forked_hog"}) {
    CAPTURE(hog);
    WorkerClient w(fake_options(200));
    CHECK(eval_with(w, "ok").status == Status::Correct);
    auto start = std::chrono::steady_clock::now();
    EvalResult r = eval_with(w, hog);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "watchdog (" << hog << "): " << r.message << " after " << seconds << " s\n";
    CHECK(r.status == Status::Crash);
    CHECK(r.reason == "host_memory_limit");
    CHECK(r.message.find("200 MiB") != std::string::npos);
    CHECK(seconds < 15);
    CHECK(eval_with(w, "ok").status == Status::Correct);
    CHECK(w.restarts() == 1);
    CHECK(w.sandbox()["memory_watchdog"]["limit_bytes"] == uint64_t{200} << 20);
  }
}

TEST_CASE("baselines: the worker's reply is written by the orchestrator under the worker's key") {
  TempDir cache;
  TempDir problems;
  const auto problem = problems.path() / "p.py";
  std::ofstream(problem) << "class Model: pass\n";
  WorkerClient w(fake_options());
  nlohmann::json options = {{"cache_dir", cache.path().string()}, {"seed", 7}};
  EvalResult r = eval_with(w, "baselines", problem.string(), options);
  REQUIRE(r.status == Status::Correct);
  // The worker received the key's settings spelled out.
  auto sent = nlohmann::json::parse(r.message);
  CHECK(sent["seed"] == 7);
  CHECK(sent["timing"]["min_samples"] == kBaselineKeyDefaults.min_samples);
  CHECK(sent["timing"]["max_time_s"] == kBaselineKeyDefaults.max_time_s);
  // The entry sits where the worker looks, in the format it reads.
  auto device = std::get<nlohmann::json>(w.hello());
  BaselineKey key = baseline_key(sha256_file_hex(problem), device, options);
  CHECK(key.seed == 7);
  CHECK(key.torch_version == "0.0-fake");
  auto entry = read_baselines(baseline_cache_file(cache.path().string(), key));
  REQUIRE(entry.has_value());
  REQUIRE(entry->eager.has_value());
  CHECK(entry->eager->median_ms == 1.5);
  CHECK_FALSE(entry->compiled.has_value());
  CHECK_FALSE(entry->compiled_error.empty());  // asked for (the default) and absent: not retried forever

  // Nothing is written for a cache hit, a wrong candidate or a run without a cache folder.
  EvalResult hit;
  hit.status = Status::Correct;
  hit.timing = Timing{};
  hit.timing->eager = TimingStats{};
  hit.timing->baseline_cache_hit = true;
  CHECK_FALSE(store_baselines(problem.string(), device, options, hit).has_value());
  hit.timing->baseline_cache_hit = false;
  hit.status = Status::RuntimeError;
  CHECK_FALSE(store_baselines(problem.string(), device, options, hit).has_value());
  hit.status = Status::Correct;
  CHECK_FALSE(store_baselines(problem.string(), device, nlohmann::json::object(), hit).has_value());
}

TEST_CASE("baselines: the key is the one the worker computed before (format and defaults unchanged)") {
  BaselineKey k{"abc", "2.11.0+cu130", "NVIDIA H200", 42, 20, 0.1, 0.01, 1.0, 5000};
  // sha256("v1|abc|2.11.0+cu130|NVIDIA H200|42|20|0.1|0.01|1|5000")[:32]
  CHECK(baseline_cache_key(k) == sha256_hex("v1|abc|2.11.0+cu130|NVIDIA H200|42|20|0.1|0.01|1|5000").substr(0, 32));
  nlohmann::json device = {{"torch_version", "2.11.0+cu130"}, {"name", "NVIDIA H200"}};
  CHECK(baseline_cache_key(baseline_key("abc", device, nlohmann::json::object())) == baseline_cache_key(k));
  BaselineEntry e;
  e.eager = TimingStats{};
  e.compiled_error = "boom";
  auto j = nlohmann::json(e);
  CHECK(j.contains("eager"));
  CHECK(j["compiled"].is_null());
  CHECK(j["compiled_error"] == "boom");
}

TEST_CASE("each worker gets a fresh scratch folder, removed when it stops") {
  TempDir parent;
  WorkerOptions o = fake_options();
  o.sandbox->scratch = parent.path().string();
  {
    WorkerClient w(o);
    REQUIRE(std::holds_alternative<nlohmann::json>(w.hello()));
    int folders = 0;
    for (const auto& e : fs::directory_iterator(parent.path())) folders += e.is_directory();
    CHECK(folders == 1);
  }
  CHECK(fs::is_empty(parent.path()));
}

TEST_CASE("the real worker reports its sandbox in hello") {
  WorkerOptions o;
  o.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  o.start_timeout = 120s;
  WorkerClient w(o);
  auto hello = w.hello();
  REQUIRE_MESSAGE(std::holds_alternative<nlohmann::json>(hello),
                  std::get<WorkerError>(hello).message);
  const auto& report = w.sandbox();
  std::cout << "worker sandbox: " << sandbox_test::mechanisms(report) << sandbox_test::notes(report) << "\n";
  CHECK(report["enabled"] == true);
  for (const char* key : {"network", "filesystem", "processes", "memory", "file_size", "cpu_time"})
    CHECK_MESSAGE(report.contains(key), key);
  CHECK(report.contains("memory_watchdog"));
  CHECK(fs::is_directory(report["scratch"].get<std::string>()));
}
