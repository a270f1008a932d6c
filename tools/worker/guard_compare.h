// The comparison every guard run ends with: a candidate's outputs against the reference's,
// with the evaluation's tolerances, reporting the first output that fails.
#pragma once

#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "checker/tolerance.h"
#include "result/eval_result.h"

namespace kagent::worker {

// nullopt when every output matches; else the first failing check (an output count mismatch
// comes back as reason::kOutputCount).
std::optional<OutputCheck> first_mismatch(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                                          const ToleranceConfig& tolerance);

// Deep copies of tensors (undefined ones stay undefined).
std::vector<at::Tensor> clone_tensors(const std::vector<at::Tensor>& tensors);

}  // namespace kagent::worker
