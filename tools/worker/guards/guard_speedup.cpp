#include "worker/guards/guard_speedup.h"

#include <fmt/format.h>

#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::optional<GuardFinding> check_speedup(const Timing& timing, double threshold) {
  if (!timing.speedup_eager || *timing.speedup_eager <= threshold) return std::nullopt;
  return GuardFinding{guard::kExcessiveSpeedup, kGuardFlag,
                      fmt::format("{:.1f}x faster than eager PyTorch (flagged above {:g}x): worth a look",
                                  *timing.speedup_eager, threshold)};
}

}  // namespace kagent::worker
