// One call of the candidate under CUPTI activity tracing, observed the way a caller would see
// it: forward returns, the caller waits for its current stream, and uses the outputs. What the
// kernel guards (guard_kernels.h) and the side-stream guard (guard_side_stream.h) judge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "profiler/kernel_activity.h"
#include "worker/service/runners.h"

namespace kagent::worker {

struct TracedCall {
  std::vector<at::Tensor> outputs;    // after a device-wide synchronisation
  std::vector<at::Tensor> at_return;  // byte copies ordered after the current stream's work only
  // Kernels of the call, by start time; nullopt when CUPTI could not trace (trace_error says why).
  std::optional<std::vector<profiler::KernelRecord>> kernels;
  std::string trace_error;
  uint64_t stream_done_ns = 0;        // CUPTI clock (host side) right after the current stream was done
  // GPU start of the marker memset the current stream ran right after forward returned
  // (CUPTI clock); nullopt when CUPTI recorded none.
  std::optional<uint64_t> marker_start_ns;
  uint32_t marker_stream = 0;
  // Host moments in CUPTI's clock, for the timeline: forward called, forward returned.
  uint64_t host_call_ns = 0, host_return_ns = 0;
  std::vector<profiler::CopyRecord> copies;  // memsets and memcpys of the call (marker, snapshot)
  // Kernels, copies and host moments, for the worker's log when a kernel ran off the current stream
  // (or KAGENT_GUARD_TIMELINE=1).
  std::string timeline;
};

// `trace`: false skips CUPTI (both kernel guards and the late-kernel check are off). CUDA
// errors of the candidate surface as from call_candidate (cuda::ContextLost when sticky).
// `expected_bytes`: the byte sizes of the expected outputs, to cache the snapshot's buffers.
TracedCall traced_call(Runner& candidate, const Values& inputs, bool trace,
                       const std::vector<int64_t>& expected_bytes = {});

}  // namespace kagent::worker
