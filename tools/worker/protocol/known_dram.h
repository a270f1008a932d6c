// A GPU's DRAM bandwidth (timer/dram_bandwidth.h), measured once per GPU. The orchestrator
// passes the last measurement of a GPU's UUID (its cache's device file) in the worker's
// environment, and a worker on that GPU takes it instead of measuring again, which needs the
// GPU's timing lock to itself. Several `kagent eval`s starting at once waited 0-8 s there (H200,
// four at once: median 1.5 s of a 12 s evaluation) behind each other's timings.
#pragma once

#include <optional>
#include <string>

namespace kagent {

inline constexpr const char* kKnownDramEnv = "KAGENT_KNOWN_DRAM_GBPS";

// "KAGENT_KNOWN_DRAM_GBPS=<uuid>=<gbps>".
std::string known_dram_env(const std::string& uuid, double gbps);

// The bandwidth `value` (the variable's value, may be null) gives for `uuid`; nullopt where it
// is absent, names another GPU, or is malformed.
std::optional<double> known_dram_gbps(const char* value, const std::string& uuid);

}  // namespace kagent
