#include "worker/client/baseline_cache.h"

#include <fmt/format.h>

#include "common/files.h"
#include "common/sha256.h"

namespace kagent {

namespace fs = std::filesystem;

void to_json(nlohmann::json& j, const BaselineEntry& b) {
  j = nlohmann::json::object();
  j["eager"] = b.eager ? nlohmann::json(*b.eager) : nlohmann::json(nullptr);
  j["compiled"] = b.compiled ? nlohmann::json(*b.compiled) : nlohmann::json(nullptr);
  j["compiled_error"] = b.compiled_error;
}

void from_json(const nlohmann::json& j, BaselineEntry& b) {
  b = BaselineEntry();
  if (j.contains("eager") && !j["eager"].is_null()) b.eager = j["eager"].get<TimingStats>();
  if (j.contains("compiled") && !j["compiled"].is_null()) b.compiled = j["compiled"].get<TimingStats>();
  b.compiled_error = j.value("compiled_error", "");
}

std::string baseline_cache_key(const BaselineKey& k) {
  return sha256_hex(fmt::format("v1|{}|{}|{}|{}|{}|{}|{}|{}|{}", k.problem_sha256, k.torch_version, k.gpu_name, k.seed,
                                k.min_samples, k.min_time_s, k.max_noise, k.max_time_s, k.max_iterations))
      .substr(0, 32);
}

fs::path baseline_cache_file(const std::string& cache_dir, const BaselineKey& k) {
  return fs::path(cache_dir) / "baselines" / (baseline_cache_key(k) + ".json");
}

nlohmann::json with_key_settings(nlohmann::json options) {
  const auto& d = kBaselineKeyDefaults;
  if (!options.is_object()) options = nlohmann::json::object();
  if (!options.contains("seed")) options["seed"] = d.seed;
  nlohmann::json& t = options["timing"];
  if (!t.is_object()) t = nlohmann::json::object();
  if (!t.contains("min_samples")) t["min_samples"] = d.min_samples;
  if (!t.contains("min_time_s")) t["min_time_s"] = d.min_time_s;
  if (!t.contains("max_noise")) t["max_noise"] = d.max_noise;
  if (!t.contains("max_time_s")) t["max_time_s"] = d.max_time_s;
  if (!t.contains("max_iterations")) t["max_iterations"] = d.max_iterations;
  return options;
}

BaselineKey baseline_key(const std::string& problem_sha256, const nlohmann::json& device, const nlohmann::json& options) {
  const nlohmann::json o = with_key_settings(options);
  const auto& t = o["timing"];
  BaselineKey k;
  k.problem_sha256 = problem_sha256;
  k.torch_version = device.value("torch_version", "");
  k.gpu_name = device.value("name", "");
  k.seed = o["seed"].get<int64_t>();
  k.min_samples = t["min_samples"].get<int64_t>();
  k.min_time_s = t["min_time_s"].get<double>();
  k.max_noise = t["max_noise"].get<double>();
  k.max_time_s = t["max_time_s"].get<double>();
  k.max_iterations = t["max_iterations"].get<int64_t>();
  return k;
}

std::optional<fs::path> store_baselines(const std::string& problem_path, const nlohmann::json& device,
                                        const nlohmann::json& options, const EvalResult& result) {
  if (result.status != Status::Correct || !result.timing) return std::nullopt;
  return store_measured_baselines(problem_path, device, options, *result.timing);
}

std::optional<fs::path> store_measured_baselines(const std::string& problem_path, const nlohmann::json& device,
                                                 const nlohmann::json& options, const Timing& t) {
  if (options.value("cache_dir", "").empty() || t.baseline_cache_hit || (!t.eager && !t.compiled)) return std::nullopt;
  BaselineEntry entry;
  entry.eager = t.eager;
  entry.compiled = t.compiled;
  // Asked for and absent means torch.compile failed; the entry says so, so that it is not
  // retried on every evaluation (the worker's reply does not carry the error text).
  if (options.value("compiled_baseline", true) && !t.compiled)
    entry.compiled_error = "torch.compile failed when these baselines were measured";
  const fs::path file = baseline_cache_file(options.value("cache_dir", ""),
                                            baseline_key(sha256_file_hex(problem_path), device, options));
  fs::create_directories(file.parent_path());
  write_file_atomic(file, nlohmann::json(entry).dump(2));  // a concurrent writer's copy is just as good
  return file;
}

std::optional<BaselineEntry> read_baselines(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    return nlohmann::json::parse(read_file(file)).get<BaselineEntry>();
  } catch (const std::exception&) {
    return std::nullopt;  // a torn or old entry: measured again
  }
}

}  // namespace kagent
