// Guard unjoined_stream: work that forward puts on a stream which does not wait for the caller's
// stream reads its inputs whenever that stream gets there. It is right when the caller's stream
// had finished writing them (KernelBench's harness synchronises before every call, so it always
// has) and garbage otherwise, so a caller that uses the output on its own stream gets garbage.
// kagent's trials find such an answer only when it loses the race: on the H200 (2026-11-29) 20 of
// CUDA-L1's 125 answers did, and a run that wins it judges them correct, a reward that flips.
//
// This call makes the race certain. The inputs are poisoned (NaN, or 0 for other dtypes) and the
// poison written, the caller's stream is held (LaunchHold), the true inputs are copied behind the
// hold, and forward is issued: a read that does not wait for the caller's stream sees the poison.
// Honest code, on the current stream or on one that waits for it, sees the true inputs; a forward
// that waits for the GPU inside is let go by the hold's watchdog and computes as usual.
//
// On by default (GuardOptions::unjoined_stream_check); the guard suite passed with it on an H200.
#pragma once

#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "checker/tolerance_config.h"
#include "result/eval_result.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// `inputs` are left as they are; `expected` is the reference's output for them.
std::optional<GuardFinding> check_unjoined_stream(Runner& candidate, const Values& inputs,
                                                  const std::vector<at::Tensor>& expected,
                                                  const ToleranceConfig& tolerance);

}  // namespace kagent::worker
