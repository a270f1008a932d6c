#include "result/device_info.h"

#include "common/json_optional.h"

namespace kagent {

void to_json(nlohmann::json& j, const DeviceInfo& d) {
  if (!d.available) {
    j = {{"available", false}};
    return;
  }
  j = {{"available", true},
       {"name", d.name},
       {"uuid", d.uuid},
       {"compute_capability", {d.cc_major, d.cc_minor}},
       {"sms", d.sms},
       {"memory_bytes", d.memory_bytes},
       {"l2_bytes", d.l2_bytes},
       {"shared_memory_per_block_optin", d.shared_memory_per_block_optin},
       {"shared_memory_per_sm", d.shared_memory_per_sm},
       {"registers_per_sm", d.registers_per_sm},
       {"max_threads_per_sm", d.max_threads_per_sm},
       {"torch_version", d.torch_version},
       {"cuda_version", d.cuda_version}};
  if (d.measured_dram_gbps) j["measured_dram_gbps"] = *d.measured_dram_gbps;
}

void from_json(const nlohmann::json& j, DeviceInfo& d) {
  d = DeviceInfo();
  if (!j.is_object() || !get_or(j, "available", false)) return;
  d.available = true;
  d.name = get_or<std::string>(j, "name", "");
  d.uuid = get_or<std::string>(j, "uuid", "");
  if (j.contains("compute_capability") && j["compute_capability"].is_array() && j["compute_capability"].size() == 2) {
    d.cc_major = j["compute_capability"][0].get<int>();
    d.cc_minor = j["compute_capability"][1].get<int>();
  }
  d.sms = get_or(j, "sms", 0);
  d.memory_bytes = get_or<int64_t>(j, "memory_bytes", 0);
  d.l2_bytes = get_or<int64_t>(j, "l2_bytes", 0);
  d.shared_memory_per_block_optin = get_or<int64_t>(j, "shared_memory_per_block_optin", 0);
  d.shared_memory_per_sm = get_or<int64_t>(j, "shared_memory_per_sm", 0);
  d.registers_per_sm = get_or<int64_t>(j, "registers_per_sm", 0);
  d.max_threads_per_sm = get_or<int64_t>(j, "max_threads_per_sm", 0);
  d.torch_version = get_or<std::string>(j, "torch_version", "");
  d.cuda_version = get_or<std::string>(j, "cuda_version", "");
  get_optional(j, "measured_dram_gbps", d.measured_dram_gbps);
}

}  // namespace kagent
