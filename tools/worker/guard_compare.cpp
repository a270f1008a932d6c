#include "worker/guard_compare.h"

#include <fmt/format.h>

#include "checker/compare.h"

namespace kagent::worker {

std::optional<OutputCheck> first_mismatch(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                                          const ToleranceConfig& tolerance) {
  if (got.size() != expected.size()) {
    OutputCheck oc;
    oc.ok = false;
    oc.reason = reason::kOutputCount;
    oc.message = fmt::format("forward returned {} output(s), expected {}", got.size(), expected.size());
    return oc;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    OutputCheck oc = compare_output(got[i], expected[i], static_cast<int>(i), tolerance);
    if (!oc.ok) return oc;
  }
  return std::nullopt;
}

std::vector<at::Tensor> clone_tensors(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.defined() ? t.clone() : t);
  return out;
}

}  // namespace kagent::worker
