// Guard excessive_speedup: a speedup over eager PyTorch far beyond what kernels usually reach
// is flagged for a person to look at (a cheat the other guards miss, or a problem whose
// reference does needless work). The verdict stands.
#pragma once

#include <optional>

#include "result/eval_result.h"

namespace kagent::worker {

std::optional<GuardFinding> check_speedup(const Timing& timing, double threshold);

}  // namespace kagent::worker
