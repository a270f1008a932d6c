#include "worker/guards/guard_inputs.h"

#include <algorithm>

#include <fmt/format.h>

#include "worker/protocol/guard_options.h"

namespace kagent::worker {

int64_t changed_elements(const at::Tensor& before, const at::Tensor& now) {
  if (!before.defined() || !now.defined()) return before.defined() == now.defined() ? 0 : 1;
  if (before.sizes() != now.sizes() || before.scalar_type() != now.scalar_type())
    return std::max<int64_t>(1, now.numel());
  if (before.numel() == 0) return 0;
  at::Tensor differ = before.ne(now);
  if (before.is_floating_point() || before.is_complex())  // NaN != NaN, but an unchanged NaN is unchanged
    differ = differ.logical_and(before.isnan().logical_and(now.isnan()).logical_not());
  return differ.sum().item<int64_t>();
}

std::optional<GuardFinding> check_unmodified(const std::vector<NamedTensor>& before,
                                             const std::vector<NamedTensor>& now) {
  for (size_t i = 0; i < before.size() && i < now.size(); ++i) {
    const int64_t changed = changed_elements(before[i].tensor, now[i].tensor);
    if (changed > 0)
      return GuardFinding{guard::kInputsModified, kGuardReject,
                          fmt::format("forward wrote {}: {} of {} elements changed", now[i].name, changed,
                                      now[i].tensor.defined() ? now[i].tensor.numel() : 0)};
  }
  return std::nullopt;
}

}  // namespace kagent::worker
