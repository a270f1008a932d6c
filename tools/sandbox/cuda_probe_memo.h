// The CUDA probe's answer (sandbox/cuda_probe.h: which filesystem layers CUDA works under), kept
// in a file for the rest of the machine's boot. Without it every `kagent eval` starts the probe
// child and CUDA in it before its worker: measured at 1.9 s of a cold evaluation's 15 s (H200,
// four evaluations at once). The answer depends on the kernel, the driver, the user and the
// layers the policy asks for; the key holds all four, so a reboot, a driver update or another
// policy probes again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/sandbox_policy.h"

namespace kagent::sandbox {

struct CudaProbeMemo {
  std::vector<std::string> left_out;  // the layers to leave out (empty: all of them work)
  nlohmann::json fallback;            // CudaLayerChoice::report() when layers were left out, else null
};

// This boot's key for `policy` (the policy before any layer was left out).
std::string cuda_probe_key(const SandboxPolicy& policy);

// The memo in `file` under `key`; nullopt when there is none, it is unreadable, or its key
// differs.
std::optional<CudaProbeMemo> read_cuda_probe_memo(const std::filesystem::path& file, const std::string& key);

// Writes it atomically; a failure only costs the next process a probe (ignored).
void write_cuda_probe_memo(const std::filesystem::path& file, const std::string& key, const CudaProbeMemo& memo);

}  // namespace kagent::sandbox
