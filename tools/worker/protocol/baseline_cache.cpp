#include "worker/protocol/baseline_cache.h"

#include <fmt/format.h>

#include "common/files.h"
#include "common/json_optional.h"
#include "common/sha256.h"

namespace kagent {

namespace fs = std::filesystem;

void to_json(nlohmann::json& j, const BaselineEntry& b) {
  j = nlohmann::json::object();
  put_optional(j, "eager", b.eager);
  put_optional(j, "compiled", b.compiled);
  j["compiled_error"] = b.compiled_error;
}

void from_json(const nlohmann::json& j, BaselineEntry& b) {
  b = BaselineEntry();
  get_optional(j, "eager", b.eager);
  get_optional(j, "compiled", b.compiled);
  b.compiled_error = get_or<std::string>(j, "compiled_error", "");
}

std::string baseline_cache_key(const std::string& problem_sha256, const DeviceInfo& device, const EvalOptions& o) {
  const MeasureConfig& t = o.timing;
  std::string key = fmt::format("v1|{}|{}|{}|{}|{}|{}|{}|{}|{}", problem_sha256, device.torch_version, device.name,
                                o.seed, t.min_samples, t.min_time_s, t.max_noise, t.max_time_s, t.max_iterations);
  // Settings added to the key later: only their non-default values enter it, so entries made
  // before (with the defaults) keep their keys.
  const MeasureConfig d;
  if (t.warmup_runs != d.warmup_runs || t.warmup_time_s != d.warmup_time_s || t.flush_l2 != d.flush_l2)
    key += fmt::format("|warmup={},{}|flush={}", t.warmup_runs, t.warmup_time_s, t.flush_l2);
  if (t.sample != d.sample) key += fmt::format("|sample={}", timing_sample_name(t.sample));
  return sha256_hex(key).substr(0, 32);
}

fs::path baseline_cache_file(const std::string& problem_sha256, const DeviceInfo& device, const EvalOptions& options) {
  return fs::path(options.cache_dir) / "baselines" / (baseline_cache_key(problem_sha256, device, options) + ".json");
}

std::optional<BaselineEntry> read_baselines(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    return nlohmann::json::parse(read_file(file)).get<BaselineEntry>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void write_baselines(const fs::path& file, const BaselineEntry& entry) {
  fs::create_directories(file.parent_path());
  write_file_atomic(file, nlohmann::json(entry).dump(2));
}

}  // namespace kagent
