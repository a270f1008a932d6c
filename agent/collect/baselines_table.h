// The baseline table: eager and torch.compile times of every problem of a suite on one GPU
// model and torch version (like KernelBench's baseline timing files). `kagent baselines`
// writes it as JSON and CSV; a collection keeps the rows its problems used (baselines.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/suite.h"
#include "result/eval_result.h"

namespace kagent::collect {

// One problem's row: {"problem", "level", "eager_ms", "eager_noise", "compiled_ms",
// "compiled_noise", "compiled_error", "cache_hit", "recheck_eager_ms", "contention", "shared_with",
// "trusted"}. recheck_eager_ms: eager as measured again on this GPU when the times came from
// the cache (null otherwise).
// contention: "idle" (NVML saw no other process), "shared" (another process used the GPU:
// the times are not trusted and were not cached), "unknown" (not asked, or NVML did not answer).
nlohmann::json baseline_row(const SuiteProblem& problem, const std::optional<Timing>& timing, bool compiled_asked);

// {"gpu", "torch", "rows": [...]}, rows by problem name.
nlohmann::json baselines_table(const std::string& gpu, const std::string& torch, std::vector<nlohmann::json> rows);
// Rows of `update` replace those of `base` with the same problem.
nlohmann::json merge_baselines(const nlohmann::json& base, const nlohmann::json& update);

// problem,level,eager_ms,eager_noise,compiled_ms,compiled_noise,compiled_error,contention,trusted
std::string baselines_csv(const nlohmann::json& table);

// A file name for a GPU and torch version: "NVIDIA_H200-torch2.11.0".
std::string baselines_file_stem(const std::string& gpu, const std::string& torch);

}  // namespace kagent::collect
