// The short profile text for the model (and the human report) from the profile JSON of
// build_profile: a per-kernel table by time share (top rows, the rest summed; for a model with
// more kernels than rows, the time by source and by kernel name first), DRAM traffic
// and achieved bandwidth against the measured peak, the bound call with its numbers,
// occupancy, spills. Sized for a few hundred tokens: rows and names are capped and every cut
// is stated. Pure C++ (library kagent_profile_text), so the agent links it without CUDA.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kagent::profiler {

struct ProfileTextOptions {
  size_t max_rows = 6;         // kernel rows; beyond it, rows of kernel names (kernel_groups.h)
  size_t max_detail_rows = 3;  // with more kernels than max_rows: the busiest ones in full
  size_t max_name_chars = 48;  // kernel names shortened to this (templates collapsed first)
  size_t max_reason_chars = 160;
};

// `compile_resources`: the compile result's per-kernel ptxas resources (JSON array of
// KernelResources: kernel, registers, spill_store_bytes, ...), or null when not at hand.
std::string render_profile_text(const nlohmann::json& profile, const nlohmann::json& compile_resources = nullptr,
                                const ProfileTextOptions& options = {});

}  // namespace kagent::profiler
