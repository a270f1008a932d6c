// The worker's side of the GPU's timing lock (worker/protocol/gpu_timing_lock.h): the hooks it
// opens the lock with, and the early join of a replacement worker.
#pragma once

#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "worker/protocol/gpu_timing_lock.h"

namespace kagent::worker {

// Writes a line before the reply (the lock lines of protocol.h), with the request's id.
using Progress = std::function<void(const nlohmann::json&)>;

// The hooks of the worker's timing lock: its device synchronised before letting go, and lock
// lines through `progress`.
GpuTimingLock::Hooks timing_lock_hooks(Progress progress);

// A replacement worker ($KAGENT_GPU_TIMING_LOCK_UUID set: its GPU is known from the worker before)
// opens that GPU's lock before CUDA starts, and holds it shared while its context comes up.
// Otherwise the new process is on the GPU for seconds (context, torch's imports) without the lock
// file open, and a sibling timing meanwhile counts it as another process: the timing is
// untrusted (bench/realworld, thirteenth session: four in a collection whose two workers were
// replaced). nullopt where the variable or the file is missing.
std::optional<GpuTimingLock> join_timing_lock_early(const Progress& progress);

}  // namespace kagent::worker
