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

namespace {

constexpr int64_t kCopyLimitBytes = int64_t{64} << 20;
constexpr int64_t kChunk = int64_t{1} << 24;

// The float64 sum of the finite elements and the NaN count, a chunk at a time.
std::pair<double, int64_t> checksum(const at::Tensor& t) {
  const at::Tensor flat = t.detach().reshape(-1);
  double sum = 0;
  int64_t nans = 0;
  for (int64_t start = 0; start < flat.numel(); start += kChunk) {
    const at::Tensor c = flat.narrow(0, start, std::min(kChunk, flat.numel() - start)).to(at::kDouble);
    sum += c.nan_to_num(0.0, 0.0, 0.0).sum().item<double>();
    nans += c.isnan().sum().item<int64_t>();
  }
  return {sum, nans};
}

}  // namespace

TensorSnapshot::TensorSnapshot(const at::Tensor& t) : defined_(t.defined()) {
  if (!defined_) return;
  sizes_ = t.sizes().vec();
  dtype_ = t.scalar_type();
  if (static_cast<int64_t>(t.nbytes()) <= kCopyLimitBytes || t.is_complex()) {
    copy_ = t.detach().clone();
    return;
  }
  std::tie(sum_, nans_) = checksum(t);
}

int64_t TensorSnapshot::changed(const at::Tensor& now) const {
  if (copy_.defined()) return changed_elements(copy_, now);
  if (!now.defined()) return defined_ ? 1 : 0;
  if (!defined_ || now.sizes().vec() != sizes_ || now.scalar_type() != dtype_) return std::max<int64_t>(1, now.numel());
  const auto [sum, nans] = checksum(now);
  return sum == sum_ && nans == nans_ ? 0 : -1;
}

std::vector<NamedSnapshot> snapshot_all(const std::vector<NamedTensor>& tensors) {
  std::vector<NamedSnapshot> out;
  for (const auto& t : tensors) out.push_back({t.name, TensorSnapshot(t.tensor)});
  return out;
}

std::optional<GuardFinding> check_unwritten(const std::vector<NamedSnapshot>& before, const std::vector<NamedTensor>& now) {
  for (const auto& b : before)
    for (const auto& n : now) {
      if (n.name != b.name) continue;
      const int64_t changed = b.snapshot.changed(n.tensor);
      if (changed > 0)
        return GuardFinding{guard::kInputsModified, kGuardReject,
                            fmt::format("forward wrote {}: {} of {} elements changed", n.name, changed,
                                        n.tensor.defined() ? n.tensor.numel() : 0)};
      if (changed < 0)
        return GuardFinding{guard::kInputsModified, kGuardReject,
                            fmt::format("forward wrote {}: its checksum changed", n.name)};
    }
  return std::nullopt;
}

}  // namespace kagent::worker
