// KAGENT_GPU_IDLE_RELEASE_MS: how long a worker waits without a CUDA call before it lets go of the
// GPU's timing lock during a candidate's host work (worker/service/idle_lock_release.h). The worker
// reads it; kagent's command line checks it before any worker starts (agent/cli/environment_settings.h),
// so that a wrong value is one line at the start of a run, not a log line in every worker.
#pragma once

#include <chrono>
#include <optional>

namespace kagent::worker {

inline constexpr const char* kIdleReleaseEnv = "KAGENT_GPU_IDLE_RELEASE_MS";
// Measured on an H200 (tests/gpu/stall): at 100 ms, 12 honest answers beside a candidate that spins
// 20 s on the host took 0.99x their time alone; without the release, 5.14x.
inline constexpr std::chrono::milliseconds kIdleReleaseDefault{100};

// The setting's value: unset or empty gives the default, 0 never lets go; nullopt where `text` is
// not a whole non-negative number of milliseconds.
std::optional<std::chrono::milliseconds> parse_idle_release(const char* text);

}  // namespace kagent::worker
