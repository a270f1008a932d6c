// The baseline cache (eager and torch.compile times per problem, torch version, GPU and
// timing settings): its key and file format, shared by both sides. The worker only reads
// it; the orchestrator alone writes it, from the worker's reply, so that candidate code
// running inside the worker cannot forge the baselines its speedup is measured against.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result/device_info.h"
#include "result/eval_result.h"
#include "worker/protocol/eval_options.h"

namespace kagent {

struct BaselineEntry {
  std::optional<TimingStats> eager, compiled;
  std::string compiled_error;  // why there is no compiled baseline
};
void to_json(nlohmann::json& j, const BaselineEntry& b);
void from_json(const nlohmann::json& j, BaselineEntry& b);

// The one key: problem file, torch version, GPU name, seed and the timing settings that
// decide what a measurement means.
std::string baseline_cache_key(const std::string& problem_sha256, const DeviceInfo& device, const EvalOptions& options);
// options.cache_dir/baselines/<key>.json
std::filesystem::path baseline_cache_file(const std::string& problem_sha256, const DeviceInfo& device,
                                          const EvalOptions& options);

// Nullopt when absent or unreadable (a torn or old entry is measured again).
std::optional<BaselineEntry> read_baselines(const std::filesystem::path& file);
// Atomic: a concurrent writer's copy is just as good.
void write_baselines(const std::filesystem::path& file, const BaselineEntry& entry);

}  // namespace kagent
