// Guard output_aliases_input: an output that shares memory with an input or a parameter is
// not a result the candidate computed (returning the input of a ReLU whose test data happen to
// be non-negative passes every comparison), and writing it later would corrupt the caller's
// tensors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "result/eval_result.h"

namespace kagent::worker {

struct NamedTensor {
  std::string name;  // "input 0", "parameter 2", ...
  at::Tensor tensor;
};

// True when the storages behind `a` and `b` cover overlapping bytes on the same device
// (views, slices, reshapes of one storage all overlap; undefined or empty tensors never do).
bool storages_overlap(const at::Tensor& a, const at::Tensor& b);

// The first output overlapping one of `others`, as a reject finding.
std::optional<GuardFinding> check_output_aliasing(const std::vector<at::Tensor>& outputs,
                                                  const std::vector<NamedTensor>& others);

}  // namespace kagent::worker
