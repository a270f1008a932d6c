// Guard inputs_modified: forward must leave its inputs and the model's parameters as they
// were. The evaluator hands every run its own copy, so a candidate that uses an input as
// scratch space passes the comparison; it would corrupt a real caller's tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "result/eval_result.h"
#include "worker/guards/guard_aliasing.h"

namespace kagent::worker {

// Elements of `now` that differ from `before` bit for bit (NaN equals NaN; a changed shape or
// dtype counts every element). Both on one device.
int64_t changed_elements(const at::Tensor& before, const at::Tensor& now);

// `before` and `now` are parallel lists (same names); the first changed tensor, as a reject.
std::optional<GuardFinding> check_unmodified(const std::vector<NamedTensor>& before,
                                             const std::vector<NamedTensor>& now);

// What a tensor held, to tell later whether it was written: a copy when it is small, else a
// checksum (float64 sum and NaN count, taken a chunk at a time) -- a copy of a model's
// gigabytes of weights would cost as much memory as the weights themselves.
class TensorSnapshot {
 public:
  explicit TensorSnapshot(const at::Tensor& t);
  // Elements changed since; -1 when only "changed" is known (a checksum differs).
  int64_t changed(const at::Tensor& now) const;

 private:
  at::Tensor copy_;  // defined for small tensors
  double sum_ = 0;
  int64_t nans_ = 0;
  std::vector<int64_t> sizes_;
  at::ScalarType dtype_ = at::kFloat;
  bool defined_ = false;
};

struct NamedSnapshot {
  std::string name;
  TensorSnapshot snapshot;
};
std::vector<NamedSnapshot> snapshot_all(const std::vector<NamedTensor>& tensors);
// `now` holds the same names; the first written tensor, as a reject.
std::optional<GuardFinding> check_unwritten(const std::vector<NamedSnapshot>& before, const std::vector<NamedTensor>& now);

}  // namespace kagent::worker
