#include "sandbox/cuda_probe_memo.h"

#include <unistd.h>

#include <fstream>

#include "common/files.h"

namespace kagent::sandbox {

namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string cuda_probe_key(const SandboxPolicy& policy) {
  nlohmann::json key = {{"boot", first_line("/proc/sys/kernel/random/boot_id")},
                        {"driver", first_line("/proc/driver/nvidia/version")},
                        {"uid", ::getuid()},
                        {"layers", nlohmann::json::array()}};
  for (const char* layer : {mechanism::kLandlock, mechanism::kMountNs, mechanism::kUid})
    if (policy.allows(layer)) key["layers"].push_back(layer);
  return key.dump();
}

std::optional<CudaProbeMemo> read_cuda_probe_memo(const std::filesystem::path& file, const std::string& key) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(read_file(file));
    if (j.value("key", "") != key) return std::nullopt;
    return CudaProbeMemo{j.at("left_out").get<std::vector<std::string>>(), j.value("fallback", nlohmann::json())};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void write_cuda_probe_memo(const std::filesystem::path& file, const std::string& key, const CudaProbeMemo& memo) {
  try {
    std::filesystem::create_directories(file.parent_path());
    write_file_atomic(file, nlohmann::json{{"key", key}, {"left_out", memo.left_out}, {"fallback", memo.fallback}}.dump());
  } catch (const std::exception&) {
  }
}

}  // namespace kagent::sandbox
