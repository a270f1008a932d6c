// Guard inputs_modified: forward must leave its inputs and the model's parameters as they
// were. The evaluator hands every run its own copy, so a candidate that uses an input as
// scratch space passes the comparison; it would corrupt a real caller's tensors.
#pragma once

#include <cstdint>
#include <optional>
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

}  // namespace kagent::worker
