// A model's parameters and buffers as a short text: one line per module, and runs of numbered
// blocks folded into one line, when alike (a ResNet stage's 22 identical bottlenecks) or when
// their sizes grow linearly with the index (a DenseNet block's layers: "[64+32i]"). What the
// task prompt shows for a model with hundreds of tensors instead of one line per tensor.
#pragma once

#include <string>
#include <vector>

#include "problem/problem_spec.h"

namespace kagent {

// The dtype most entries have ("float32"); entries of another dtype name theirs.
std::string common_dtype(const std::vector<TensorArg>& params);

// Lines in state_dict order, e.g.
//   `conv1`: weight [64, 3, 7, 7]
//   `bn1`: weight [64], bias [64]; buffers running_mean [64], running_var [64], num_batches_tracked int64 []
//   `layer3.{1..22}` (22 alike), each: `conv1`: weight [256, 1024, 1, 1] | `bn1`: weight [256], ...
//   `dense.layers.i` for i = 0..5 (6 alike), each: `0`: weight [64+32i], ... | `2`: weight [32, 64+32i, 3, 3]
// Entries of the model itself (no dot in the name) are listed under `(model)`.
std::vector<std::string> param_listing(const std::vector<TensorArg>& params);

}  // namespace kagent
