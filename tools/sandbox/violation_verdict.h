// What a sandbox violation does to an evaluation's verdict: whatever the candidate returned,
// it tried what the sandbox forbids, so the verdict is runtime_error with the reason
// sandbox_network, sandbox_filesystem or sandbox_processes (in that order of precedence) and
// the refusals in the message, under every policy.
#pragma once

#include <nlohmann/json.hpp>

#include "sandbox/violation_monitor.h"

namespace kagent::sandbox {

inline constexpr const char* kReasonNetwork = "sandbox_network";
inline constexpr const char* kReasonFilesystem = "sandbox_filesystem";
inline constexpr const char* kReasonProcesses = "sandbox_processes";
// Set by the orchestrator when it ends a worker: its memory watchdog, RLIMIT_CPU's SIGXCPU.
inline constexpr const char* kReasonHostMemory = "host_memory_limit";
inline constexpr const char* kReasonCpuTime = "cpu_time_limit";

// `reply` is the worker's evaluate reply ({"ok":true,"result":EvalResult}); unchanged when
// there were no violations or it carries no result.
void apply_violations(nlohmann::json& reply, const Violations& v);

}  // namespace kagent::sandbox
