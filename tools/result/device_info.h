// DeviceInfo: the GPU a worker evaluates on, as it reports it in its hello. It names the GPU
// in reports and trajectories, picks nvcc's target, keys the baseline cache and gives the
// profiler its limits. Plain data, JSON in and out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kagent {

struct DeviceInfo {
  bool available = false;  // false: no CUDA device visible (the other fields are empty)
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // NVML's "GPU-5c0f...": the orchestrator watches the GPU through it
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  int64_t shared_memory_per_block_optin = 0;
  int64_t shared_memory_per_sm = 0;
  int64_t registers_per_sm = 0;
  int64_t max_threads_per_sm = 0;
  std::string torch_version, cuda_version;
  std::optional<double> measured_dram_gbps;  // a device-to-device copy, read + write bytes (timer/dram_bandwidth.h)
};

void to_json(nlohmann::json& j, const DeviceInfo& d);
void from_json(const nlohmann::json& j, DeviceInfo& d);  // null or {} -> not available

}  // namespace kagent
