// Guard side_stream: work left running on another stream when forward returns. The evaluator
// synchronizes the whole device before comparing, and the timer's end event sits on the legacy
// stream, which a non-blocking side stream does not join, so such a candidate passes and times
// as if it took nothing. Two independent checks on one traced call:
//   - no kernel may end after the marker (a tiny memset) that the current stream, the one a
//     caller synchronizes with, ran right after forward returned. Both times come from the GPU
//     through CUPTI, so the host's own latency between the launch and its checks (tens of
//     microseconds: long enough for a whole softmax to finish) does not count;
//   - outputs copied the moment forward returned, ordered after the current stream only, must
//     already match the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "checker/tolerance.h"
#include "profiler/kernel_activity.h"
#include "result/eval_result.h"

namespace kagent::worker {

// Where the current stream's work ended, in CUPTI's clock.
struct StreamEnd {
  uint64_t ns = 0;
  bool gpu_marker = false;  // the marker's GPU start; false: the host's moment (a fallback)
};

std::optional<GuardFinding> check_late_kernels(const std::vector<profiler::KernelRecord>& records, StreamEnd end,
                                               double margin_us);

// `at_return`: the outputs as copied when the current stream was done; `synced_ok`: whether
// the same outputs matched after a device-wide synchronisation (only then is the difference
// the side stream's doing).
std::optional<GuardFinding> check_outputs_at_return(const std::vector<at::Tensor>& at_return,
                                                    const std::vector<at::Tensor>& expected, bool synced_ok,
                                                    const ToleranceConfig& tolerance);

}  // namespace kagent::worker
