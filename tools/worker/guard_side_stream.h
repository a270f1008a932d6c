// Guard side_stream: work left running on another stream when forward returns. The evaluator
// synchronizes the whole device before comparing, and the timer's end event sits on the legacy
// stream, which a non-blocking side stream does not join, so such a candidate passes and times
// as if it took nothing. Two independent checks on one traced call:
//   - outputs copied the moment forward returned and the current stream (the one a caller
//     synchronizes with) was done must already match the reference;
//   - no kernel may end later than that moment (CUPTI's clock; a margin for clock skew).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "checker/tolerance.h"
#include "profiler/kernel_activity.h"
#include "result/eval_result.h"

namespace kagent::worker {

std::optional<GuardFinding> check_late_kernels(const std::vector<profiler::KernelRecord>& records,
                                               uint64_t stream_done_ns, double margin_us);

// `at_return`: the outputs as copied when the current stream was done; `synced_ok`: whether
// the same outputs matched after a device-wide synchronisation (only then is the difference
// the side stream's doing).
std::optional<GuardFinding> check_outputs_at_return(const std::vector<at::Tensor>& at_return,
                                                    const std::vector<at::Tensor>& expected, bool synced_ok,
                                                    const ToleranceConfig& tolerance);

}  // namespace kagent::worker
