// The exact C++ signature a native candidate's `forward` must have for a problem.
// The prompt spells it, the binding checks it at compile time.
//
// Two conventions, by the number of parameters and buffers: up to kMaxPositionalParams
// they follow the inputs one by one (`torch::Tensor gemm_weight`); above it, as one
// `const kagent::Params& params` addressed by state_dict name, so a ResNet's 600 tensors
// neither make a 600-argument signature nor a binding whose compile grows with them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "problem/problem_spec.h"

namespace kagent {

inline constexpr std::size_t kMaxPositionalParams = 16;

enum class ParamPassing { Positional, Collection };
ParamPassing param_passing(const ProblemSpec& spec);

// The C++ type of the Collection argument, and its name in the signature: `params`, unless
// an input already has that name.
inline constexpr const char* kParamsCppType = "const kagent::Params&";
std::string params_arg_name(const ProblemSpec& spec);

struct ForwardParam {
  std::string cpp_type;  // "torch::Tensor", "int64_t", "double", "bool", or kParamsCppType
  std::string name;      // C++ identifier
};

// All forward parameters: inputs in order, then the parameters and buffers in state_dict
// order (Positional) or the one kagent::Params (Collection).
// Throws std::invalid_argument when an input has a type a native candidate cannot take.
std::vector<ForwardParam> forward_params(const ProblemSpec& spec);

// "torch::Tensor" for a single tensor output, "std::vector<torch::Tensor>" otherwise.
std::string forward_return_type(const ProblemSpec& spec);

// e.g. "torch::Tensor forward(torch::Tensor x, torch::Tensor gemm_weight, double scale)",
// "torch::Tensor forward(torch::Tensor x, const kagent::Params& params)"
std::string forward_signature(const ProblemSpec& spec);

}  // namespace kagent
