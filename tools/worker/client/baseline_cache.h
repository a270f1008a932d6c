// The baseline cache (eager and torch.compile times per problem, torch version, GPU and
// timing settings): its key and file format, shared by both sides. The worker only reads
// it; the orchestrator alone writes it, from the worker's evaluate reply, so that
// candidate code running inside the worker cannot forge the baselines its speedup is
// measured against.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result/eval_result.h"

namespace kagent {

struct BaselineEntry {
  std::optional<TimingStats> eager, compiled;
  std::string compiled_error;  // why there is no compiled baseline
};
void to_json(nlohmann::json& j, const BaselineEntry& b);
void from_json(const nlohmann::json& j, BaselineEntry& b);

// Everything the key depends on.
struct BaselineKey {
  std::string problem_sha256, torch_version, gpu_name;
  int64_t seed = 0;
  int64_t min_samples = 0;
  double min_time_s = 0, max_noise = 0, max_time_s = 0;
  int64_t max_iterations = 0;
};
std::string baseline_cache_key(const BaselineKey& k);
std::filesystem::path baseline_cache_file(const std::string& cache_dir, const BaselineKey& k);

// The worker's defaults for what enters the key (EvalOptions::seed, MeasureConfig);
// tools/worker/baselines.cpp checks at compile time that they still agree.
struct BaselineKeyDefaults {
  int64_t seed = 42;
  int64_t min_samples = 20;
  double min_time_s = 0.1, max_noise = 0.01, max_time_s = 1.0;
  int64_t max_iterations = 5000;
};
inline constexpr BaselineKeyDefaults kBaselineKeyDefaults{};

// `options` (an evaluate request's) with the seed and timing settings written out, so the
// worker measures with exactly the values the orchestrator keys the cache with.
nlohmann::json with_key_settings(nlohmann::json options);

// The key of an evaluation: problem file, the worker's device description, the options
// as with_key_settings made them.
BaselineKey baseline_key(const std::string& problem_sha256, const nlohmann::json& device, const nlohmann::json& options);

// Orchestrator side: writes the baselines a correct evaluation measured (not those it read
// from the cache) under options["cache_dir"]. Returns the file written, nullopt when there
// was nothing to write. Throws std::runtime_error when the problem file cannot be read.
std::optional<std::filesystem::path> store_baselines(const std::string& problem_path, const nlohmann::json& device,
                                                     const nlohmann::json& options, const EvalResult& result);
// The same for baselines measured on their own (the worker's `baselines` request): written
// unless they came from the cache or nothing was measured.
std::optional<std::filesystem::path> store_measured_baselines(const std::string& problem_path,
                                                              const nlohmann::json& device,
                                                              const nlohmann::json& options, const Timing& timing);

// Worker side: the cached entry, nullopt when absent or unreadable.
std::optional<BaselineEntry> read_baselines(const std::filesystem::path& file);

}  // namespace kagent
