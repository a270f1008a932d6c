// The orchestrator's side of the sandbox: the memory watchdog, the baseline cache that only
// the orchestrator writes, the scratch folder's life, and the real worker's sandbox report.
#include <doctest/doctest.h>

#include <fstream>
#include <iostream>

#include "common/sha256.h"
#include "kagent_process.h"
#include "sandbox_test_util.h"
#include "temp_dir.h"
#include "worker/protocol/baseline_cache.h"
#include "worker/protocol/protocol.h"
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
                     const EvalOptions& options = {}) {
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
  EvalOptions options;
  options.cache_dir = cache.path().string();
  options.seed = 7;
  EvalResult r = eval_with(w, "baselines", problem.string(), options);
  REQUIRE(r.status == Status::Correct);
  // The worker received every setting the key depends on, spelled out.
  const auto sent = nlohmann::json::parse(r.message).get<EvalOptions>();
  CHECK(sent.seed == 7);
  CHECK(sent.timing.min_samples == MeasureConfig{}.min_samples);
  CHECK(sent.timing.max_time_s == MeasureConfig{}.max_time_s);
  CHECK(sent.cache_dir == options.cache_dir);
  // The entry sits where the worker looks, in the format it reads.
  const auto device = std::get<DeviceInfo>(w.hello());
  CHECK(device.torch_version == "0.0-fake");
  auto entry = read_baselines(baseline_cache_file(sha256_file_hex(problem), device, options));
  REQUIRE(entry.has_value());
  REQUIRE(entry->eager.has_value());
  CHECK(entry->eager->median_ms == 1.5);
  CHECK_FALSE(entry->compiled.has_value());
  CHECK_FALSE(entry->compiled_error.empty());  // asked for (the default) and absent: not retried forever

  // Nothing is written for a wrong candidate, or without a cache folder.
  TempDir other;
  options.cache_dir = other.path().string();
  CHECK(eval_with(w, "ok", problem.string(), options).status == Status::Correct);  // no timing in the reply
  CHECK_FALSE(fs::exists(other.path() / "baselines"));
  options.cache_dir.clear();
  CHECK(eval_with(w, "baselines", problem.string(), options).status == Status::Correct);
}

TEST_CASE("baselines: the key is the one the worker computed before (format unchanged)") {
  DeviceInfo device;
  device.available = true;
  device.torch_version = "2.11.0+cu130";
  device.name = "NVIDIA H200";
  // sha256("v1|abc|2.11.0+cu130|NVIDIA H200|42|20|0.1|0.01|1|5000")[:32]: cache entries measured
  // with the floors of before the thirty-fourth session (20 samples, 0.1 s) and the cap of before
  // the thirty-sixth (1 s) keep their key...
  EvalOptions before;
  before.timing.min_samples = 20;
  before.timing.min_time_s = 0.1;
  before.timing.max_time_s = 1.0;
  CHECK(baseline_cache_key("abc", device, before) ==
        sha256_hex("v1|abc|2.11.0+cu130|NVIDIA H200|42|20|0.1|0.01|1|5000").substr(0, 32));
  // ...and the defaults since (10 samples, 0.04 s, a cap of 0.5 s) key entries of their own: a
  // time taken with other floors or cap is not read as one taken with these.
  CHECK(baseline_cache_key("abc", device, EvalOptions{}) ==
        sha256_hex("v1|abc|2.11.0+cu130|NVIDIA H200|42|10|0.04|0.01|0.5|5000").substr(0, 32));
  // A time taken with the stream held is never read as one with the launch latency in.
  EvalOptions held = before;
  held.timing.sample = TimingSample::Gpu;
  CHECK(baseline_cache_key("abc", device, held) ==
        sha256_hex("v1|abc|2.11.0+cu130|NVIDIA H200|42|20|0.1|0.01|1|5000|sample=gpu").substr(0, 32));
  EvalOptions seeded;
  seeded.seed = 43;
  CHECK(baseline_cache_key("abc", device, seeded) != baseline_cache_key("abc", device, EvalOptions{}));
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
    REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
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
  auto w = std::make_unique<WorkerClient>(o);
  auto hello = w->hello();
  REQUIRE_MESSAGE(std::holds_alternative<DeviceInfo>(hello),
                  std::get<WorkerError>(hello).message);
  const nlohmann::json report = w->sandbox();
  std::cout << "worker sandbox: " << sandbox_test::mechanisms(report) << sandbox_test::notes(report) << "\n";
  CHECK(report["enabled"] == true);
  for (const char* key : {"network", "filesystem", "processes", "memory", "file_size", "cpu_time"})
    CHECK_MESSAGE(report.contains(key), key);
  CHECK(report.contains("memory_watchdog"));
  CHECK(fs::is_directory(report["scratch"].get<std::string>()));
  // The worker's pids cgroup, where it has one, goes with it.
  const std::string group = report.value("cgroup", "");
  if (!group.empty()) {
    CHECK(fs::is_directory(group));
    w.reset();  // the worker stops
    CHECK_MESSAGE(!fs::exists(group), group);
  }
}

// Issue 47: a run that requires a property (KAGENT_SANDBOX_REQUIRE) is refused before any
// candidate runs where no mechanism holds it (simulated with KAGENT_SANDBOX_DISABLE): one line,
// exit status 17; with the property held, the same command goes on to its usual end.
TEST_CASE("KAGENT_SANDBOX_REQUIRE: a missing property refuses the run, one line, exit 17") {
  const testing::TempDir dir("kagent-sandbox-require");
  const std::string problem = KAGENT_SOURCE_DIR "/examples/elementwise_gelu.py";
  const std::string candidate = KAGENT_SOURCE_DIR "/examples/elementwise_gelu.cu";
  const std::string off_processes = "KAGENT_SANDBOX_DISABLE=cgroup_pids,rlimit_nproc,notify";
  auto refused = testing::run_kagent({"eval", problem, candidate}, {"KAGENT_SANDBOX_REQUIRE=processes,network", off_processes},
                                     dir.str());
  CHECK(refused.status == 17);
  CHECK(refused.err_lines() == 1);
  CHECK(testing::has(refused.err, "processes"));
  CHECK(testing::has(refused.err, "KAGENT_SANDBOX_REQUIRE"));
  CHECK_FALSE(testing::has(refused.err, "network ("));  // held: not named
  // A setting's wrong value is a usage error: exit 2, one line that says what is wrong with it.
  const auto usage_error = [&](const std::string& setting, const std::string& says) {
    auto r = testing::run_kagent({"eval", problem, candidate}, {setting}, dir.str());
    CHECK_MESSAGE(r.status == 2, setting);
    CHECK_MESSAGE(r.err_lines() == 1, setting);
    CHECK_MESSAGE(testing::has(r.err, says), r.err);
  };
  // An unknown property of the sandbox's requirement.
  usage_error("KAGENT_SANDBOX_REQUIRE=gpus", "unknown property 'gpus'");
  // The idle release's (issue 46), as a bad flag value is.
  usage_error("KAGENT_GPU_IDLE_RELEASE_MS=10ms", "KAGENT_GPU_IDLE_RELEASE_MS=10ms is not a whole number of milliseconds");
  // How the workers wait for the GPU: one of three words.
  usage_error("KAGENT_GPU_WAIT=sleep", "KAGENT_GPU_WAIT=sleep is not spin, yield or block");
  // The trials' draw processes: a count.
  usage_error("KAGENT_DRAW_AHEAD=-1", "KAGENT_DRAW_AHEAD=-1 is not a count of draw processes from 0 to 16");
  // Every on/off switch and whole-number setting (common/switch_value.h), where the readers
  // used to warn and go on with their default.
  usage_error("KAGENT_MICRO_FULL_STD=maybe", "KAGENT_MICRO_FULL_STD=maybe is not on or off");
  usage_error("KAGENT_PROFILER_PASSES=17", "KAGENT_PROFILER_PASSES=17 is not a whole number from 1 to 16");
  // Required and held: the worker starts (its hello), and the refusal names what is missing
  // when the same worker lacks one.
  ::setenv("KAGENT_SANDBOX_REQUIRE", "network,filesystem", 1);
  {
    WorkerOptions o;
    o.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
    o.start_timeout = 120s;
    WorkerClient held(o);
    auto hello = held.hello();
    CHECK_MESSAGE(std::holds_alternative<DeviceInfo>(hello), std::get<WorkerError>(hello).message);
    sandbox::SandboxPolicy without_network;
    without_network.disabled = {"netns", "seccomp"};
    o.sandbox = without_network;
    WorkerClient lacking(o);
    auto refusal = lacking.hello();
    REQUIRE(std::holds_alternative<WorkerError>(refusal));
    CHECK(std::get<WorkerError>(refusal).kind == reason::kSandboxUnmet);
    CHECK(testing::has(std::get<WorkerError>(refusal).message, "network"));
  }
  ::unsetenv("KAGENT_SANDBOX_REQUIRE");
}
