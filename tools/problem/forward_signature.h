// The exact C++ signature a native candidate's `forward` must have for a problem.
// The prompt spells it, the binding checks it at compile time.
#pragma once

#include <string>
#include <vector>

#include "problem/problem_spec.h"

namespace kagent {

struct ForwardParam {
  std::string cpp_type;  // "torch::Tensor", "int64_t", "double", "bool"
  std::string name;      // C++ identifier
};

// All forward parameters: inputs in order, then parameters and buffers in state_dict order.
// Throws std::invalid_argument when an input has a type a native candidate cannot take.
std::vector<ForwardParam> forward_params(const ProblemSpec& spec);

// "torch::Tensor" for a single tensor output, "std::vector<torch::Tensor>" otherwise.
std::string forward_return_type(const ProblemSpec& spec);

// e.g. "torch::Tensor forward(torch::Tensor x, torch::Tensor gemm_weight, double scale)"
std::string forward_signature(const ProblemSpec& spec);

}  // namespace kagent
