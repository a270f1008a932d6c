#include "worker/guards/guard_host_work.h"

#include <algorithm>

#include <fmt/format.h>

#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::optional<GuardFinding> check_host_work(const Timing& timing) {
  if (!timing.candidate) return std::nullopt;
  const TimingStats& c = *timing.candidate;
  // Margins wide enough that noise never rejects an honest answer: a Python forward's issue time
  // moves by 20-70% between worker processes (H200, 2026-11-29: an honest 7 us ReLU issued in
  // 64 us once, about 30 us elsewhere, its reference in 16 us). So four times its own GPU time and
  // 200 us over it, and four times the reference's issue time and 100 us over it (a level-3
  // model's many launches issue slowly in the reference as well, and that is no hack). Host work
  // that pays must be larger: the held stream deadlocks any synchronising copy of the inputs.
  const double own = std::max(4 * c.median_ms, c.median_ms + 0.2);
  if (c.issue_median_ms <= own) return std::nullopt;
  if (timing.eager && c.issue_median_ms <= 4 * timing.eager->issue_median_ms + 0.1) return std::nullopt;
  return GuardFinding{guard::kHostWork, kGuardReject,
                      fmt::format("forward spends {:.1f} us on the host issuing its work and {:.1f} us on the GPU{}; the "
                                  "timing sample (the GPU's time alone) does not see the host's",
                                  c.issue_median_ms * 1e3, c.median_ms * 1e3,
                                  timing.eager ? fmt::format(" (the reference issues its own in {:.1f} us)",
                                                             timing.eager->issue_median_ms * 1e3)
                                               : std::string())};
}

}  // namespace kagent::worker
