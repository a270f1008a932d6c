// Which filesystem layers CUDA tolerates on this machine. Some kernels leave CUDA without a
// device under Landlock or a read-only mount namespace (seen on an H200 under Firecracker 6.18,
// cause not established), so before the worker closes its sandbox it starts itself in probe
// mode under the planned sandbox and asks CUDA for a device; if there is none it leaves out the
// next filesystem layer (landlock, then mount_ns, then uid) and asks again. The monitor's write
// check and every other layer stay. Probing costs one CUDA initialisation per configuration
// tried, in a child process; the worker itself starts only once.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/sandbox_policy.h"

namespace kagent::sandbox {

// The argument that puts kagent-worker into probe mode.
inline constexpr const char* kCudaProbeArg = "--probe-cuda";
// Set by the orchestrator for a worker whose configuration already found the device.
inline constexpr const char* kCudaCheckedEnv = "KAGENT_SANDBOX_CUDA_CHECKED";

struct CudaLayerChoice {
  std::vector<std::string> left_out;  // filesystem layers to leave out, in the order dropped
  std::vector<std::string> failures;  // per failing configuration: what the probe printed
  bool probed = false;                // false: nothing to probe (no GPU nodes, sandbox off, ...)
  bool device_found = true;           // false: no configuration found a device (left_out then empty)
  double seconds = 0;
  nlohmann::json report() const;      // for the hello's sandbox report (cuda_fallback)
};

// Whether this machine has NVIDIA's device nodes: where it has none there is nothing to probe.
bool gpu_nodes_present();

// `self`: the worker executable (/proc/self/exe). The probe child inherits stderr, so its
// words land in the worker's log.
CudaLayerChoice choose_cuda_layers(const SandboxPolicy& policy, const std::string& self);

}  // namespace kagent::sandbox
