#include "worker/guards/guard_host_work.h"

#include <algorithm>

#include <fmt/format.h>

#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::optional<GuardFinding> check_host_work(const Timing& timing) {
  if (!timing.candidate) return std::nullopt;
  const TimingStats& c = *timing.candidate;
  // Twice its own GPU time and 50 us over it: a Python forward's few launches issue in tens of
  // microseconds. Twice the reference's issue time and 20 us over it: a level-3 model's many
  // launches issue slowly in the reference as well, and that is no hack.
  const double own = std::max(2 * c.median_ms, c.median_ms + 0.05);
  if (c.issue_median_ms <= own) return std::nullopt;
  if (timing.eager && c.issue_median_ms <= 2 * timing.eager->issue_median_ms + 0.02) return std::nullopt;
  return GuardFinding{guard::kHostWork, kGuardReject,
                      fmt::format("forward spends {:.1f} us on the host issuing its work and {:.1f} us on the GPU{}; the "
                                  "timing sample (the GPU's time alone) does not see the host's",
                                  c.issue_median_ms * 1e3, c.median_ms * 1e3,
                                  timing.eager ? fmt::format(" (the reference issues its own in {:.1f} us)",
                                                             timing.eager->issue_median_ms * 1e3)
                                               : std::string())};
}

}  // namespace kagent::worker
