// Baselines that can be trusted, on the GPU, through the kagent binary as users run it:
// two evaluations at once that share the GPU's timing lock take turns to time, and both trust
// their timings; two that do not share it (ledger folders of their own) both say their timings
// were taken on a shared GPU and leave the baseline cache empty; a cached eager time doctored to 2x its real value is caught by the
// re-check of the next evaluation, measured again and replaced. Skipped (exit 77, with the
// reason) where no GPU is visible.
#include <doctest/doctest.h>

#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "kagent_process.h"
#include "temp_dir.h"
#include "worker/client/worker_client.h"
#include "worker_device.h"

using namespace kagent;
using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

// main() has skipped the suite where the driver sees no device; the worker must see it too.
void require_gpu() {
  WorkerOptions wo;
  wo.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  WorkerClient probe(wo);
  (void)require_worker_gpu(probe, "baselines GPU test");
}

std::vector<std::string> eval_args() {
  const std::string root = KAGENT_SOURCE_DIR;
  return {"eval", root + "/examples/gemm_bias_relu.py", root + "/examples/gemm_bias_relu.cu", "--json",
          "--no-profile", "--no-compile-baseline"};
}

nlohmann::json result_of(const KagentRun& r) {
  const auto start = r.out.find('{');
  REQUIRE_MESSAGE(start != std::string::npos, r.out << r.err);
  return nlohmann::json::parse(r.out.substr(start));
}

std::vector<fs::path> cached_baselines(const fs::path& cache) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache / "baselines", ec)) files.push_back(e.path());
  return files;
}

}  // namespace

TEST_CASE("two evaluations at once on one timing lock take turns: both trust their timings and cache them") {
  require_gpu();
  TempDir dir("kagent-baselines-gpu");
  fs::create_directories(dir.path() / "a"), fs::create_directories(dir.path() / "b");
  const std::vector<std::string> env = {"KAGENT_GPU_ADMISSION_DIR=" + (dir.path() / "ledger").string()};
  KagentProcess a = spawn_kagent(eval_args(), env, (dir.path() / "a").string());
  KagentProcess b = spawn_kagent(eval_args(), env, (dir.path() / "b").string());
  const KagentRun ra = a.wait(), rb = b.wait();
  for (const KagentRun* r : {&ra, &rb}) {
    INFO(r->err);
    const nlohmann::json j = result_of(*r);
    CHECK(j["status"] == "correct");
    CHECK(j["timing"]["contention"]["timing_lock"] == true);
    CHECK(j["timing"]["contention"]["shared"] == false);
    CHECK_FALSE(has(r->err, "warning: timings were taken on a shared GPU"));
    std::cout << "siblings seen: " << j["timing"]["contention"].value("siblings", nlohmann::json::array()).dump()
              << ", waited for the lock " << j.value("isolation", nlohmann::json::object()).value("timing_lock_wait_seconds", 0.0) << " s\n";
  }
  CHECK(cached_baselines(dir.path() / "a" / "cache").size() == 1);
  CHECK(cached_baselines(dir.path() / "b" / "cache").size() == 1);
}

TEST_CASE("two evaluations at once without a timing lock in common: both warn of the shared GPU, neither caches") {
  require_gpu();
  TempDir dir("kagent-baselines-gpu");
  fs::create_directories(dir.path() / "a"), fs::create_directories(dir.path() / "b");
  // Ledger folders of their own: neither takes part in the other's lock, so each is the other's contention.
  KagentProcess a = spawn_kagent(eval_args(), {"KAGENT_GPU_ADMISSION_DIR=" + (dir.path() / "a" / "ledger").string()},
                                       (dir.path() / "a").string());
  KagentProcess b = spawn_kagent(eval_args(), {"KAGENT_GPU_ADMISSION_DIR=" + (dir.path() / "b" / "ledger").string()},
                                       (dir.path() / "b").string());
  const KagentRun ra = a.wait(), rb = b.wait();
  for (const KagentRun* r : {&ra, &rb}) {
    INFO(r->err);
    const nlohmann::json j = result_of(*r);
    CHECK(j["status"] == "correct");
    CHECK(j["timing"]["contention"]["shared"] == true);
    CHECK(has(r->err, "warning: timings were taken on a shared GPU"));
    std::cout << "shared GPU seen: " << j["timing"]["contention"]["others"].dump() << "\n";
  }
  CHECK(cached_baselines(dir.path() / "a" / "cache").empty());
  CHECK(cached_baselines(dir.path() / "b" / "cache").empty());
}

TEST_CASE("a doctored cached baseline (eager 2x too slow) is caught, measured again and replaced") {
  require_gpu();
  TempDir dir("kagent-baselines-gpu");
  const std::string cwd = dir.str();
  const KagentRun first = run_kagent(eval_args(), {}, cwd);
  REQUIRE_MESSAGE(result_of(first)["status"] == "correct", first.err);
  const auto files = cached_baselines(dir.path() / "cache");
  REQUIRE(files.size() == 1);
  nlohmann::json entry = nlohmann::json::parse(read_file(files[0]));
  const double honest = entry["eager"]["median_ms"].get<double>();
  entry["eager"]["median_ms"] = 2 * honest;
  write_file_atomic(files[0], entry.dump());

  KagentRun second = run_kagent(eval_args(), {}, cwd);
  const nlohmann::json j = result_of(second);
  INFO(second.err);
  REQUIRE(j["timing"].contains("baseline_recheck"));
  CHECK(j["timing"]["baseline_recheck"]["replaced"] == true);
  CHECK(j["timing"]["baseline_recheck"]["cached_ms"].get<double>() == doctest::Approx(2 * honest));
  CHECK(j["timing"]["baseline_cache_hit"] == false);
  const double now = nlohmann::json::parse(read_file(files[0]))["eager"]["median_ms"].get<double>();
  CHECK(std::abs(now / honest - 1) < 0.10);
  // Without --json the report says so in a line.
  entry["eager"]["median_ms"] = 2 * now;
  write_file_atomic(files[0], entry.dump());
  std::vector<std::string> text_args = eval_args();
  std::erase(text_args, "--json");
  const KagentRun text = run_kagent(text_args, {}, cwd);
  CHECK(has(text.out, "measured again and replaced"));
  std::cout << "doctored baseline: cached " << 2 * honest << " ms, re-check "
            << j["timing"]["baseline_recheck"]["measured_ms"].get<double>() << " ms, replaced; honest " << honest
            << " ms, now " << now << " ms\n";
}
