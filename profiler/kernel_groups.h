// The profile's kernel rows summed into groups, for models whose forward launches hundreds of
// kernels: by name (the instantiations of one template are one group) and by source (own,
// cudnn, aten, ...). Every row counts in exactly one group of each kind, so the own vs library
// split stays complete however few groups a text shows. Pure C++ (kagent_profile_text).
#pragma once

#include <nlohmann/json.hpp>

namespace kagent::profiler {

// [{name, own, source, kernels, calls, total_ms, share_pct}], by total time, from the profile
// JSON's `kernels` rows; `name` is kernel_family() of the rows' names.
nlohmann::json group_kernels_by_name(const nlohmann::json& kernels);

// [{source, own, kernels, calls, total_ms, share_pct}], by total time.
nlohmann::json group_kernels_by_source(const nlohmann::json& kernels);

}  // namespace kagent::profiler
