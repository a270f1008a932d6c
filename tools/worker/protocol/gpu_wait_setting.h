// KAGENT_GPU_WAIT: how a worker's threads wait for the GPU outside its timings (CUDA's context
// scheduling flags). Inside an exclusive hold of the GPU's timing lock (the timing, the baselines,
// the profile) a worker always spins, as CUDA does by default with one context per process: a
// timing's host latency does not change. Outside it, four workers spinning through correctness
// trials and guards take cores that the compilers and the timing worker's Python need on a host
// whose 16 cores are 10-15 busy (bench/realworld/RESULTS.md, thirty-sixth session); `yield` and
// `block` give them back. Not measured on a GPU yet: `spin`, CUDA's own choice, is the default.
// The worker reads it; kagent's command line checks it before any worker starts
// (agent/cli/environment_settings.h).
#pragma once

#include <optional>
#include <string_view>

namespace kagent::worker {

inline constexpr const char* kGpuWaitEnv = "KAGENT_GPU_WAIT";

enum class GpuWait { Spin, Yield, Block };

// "spin", "yield" or "block"; unset or empty gives Spin; nullopt for anything else.
std::optional<GpuWait> parse_gpu_wait(const char* text);

std::string_view gpu_wait_name(GpuWait w);

}  // namespace kagent::worker
