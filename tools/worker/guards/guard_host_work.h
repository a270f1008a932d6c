// Guard host_work: under `--timing-sample gpu` a sample is the GPU's time alone (the stream held
// until the call is issued, timer/launch_hold.h), so host work inside forward is not in the
// speedup. A candidate that spends far longer issuing its call than its GPU time, and far longer
// than the reference takes to issue its own, has moved work onto the host where the timer does
// not look: rejected under both policies. Under `launch` and `steady` the issue time is in the
// sample and this cannot fire (a launch sample spans the issue; a steady one is at least it).
#pragma once

#include <optional>

#include "result/eval_result.h"

namespace kagent::worker {

std::optional<GuardFinding> check_host_work(const Timing& timing);

}  // namespace kagent::worker
