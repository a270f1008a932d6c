#include "problem/forward_signature.h"

#include <stdexcept>

namespace kagent {

namespace {
std::string cpp_type_of(const TensorArg& a) {
  switch (a.kind) {
    case ArgKind::Tensor: return "torch::Tensor";
    case ArgKind::Int: return "int64_t";
    case ArgKind::Float: return "double";
    case ArgKind::Bool: return "bool";
    case ArgKind::Unsupported: break;
  }
  throw std::invalid_argument("forward argument '" + a.name + "' has Python type '" + a.python_type +
                              "', which a native candidate cannot take (use --format kernelbench)");
}
}  // namespace

std::string params_arg_name(const ProblemSpec& spec) {
  std::string name = "params";
  for (bool clash = true; clash;) {  // an input already called `params`
    clash = false;
    for (const auto& a : spec.inputs) clash = clash || a.cpp_name == name;
    if (clash) name = "model_" + name;
  }
  return name;
}

ParamPassing param_passing(const ProblemSpec& spec) {
  return spec.params.size() > kMaxPositionalParams ? ParamPassing::Collection : ParamPassing::Positional;
}

std::vector<ForwardParam> forward_params(const ProblemSpec& spec) {
  std::vector<ForwardParam> out;
  out.reserve(spec.inputs.size() + spec.params.size());
  for (const auto& a : spec.inputs) out.push_back({cpp_type_of(a), a.cpp_name});
  if (param_passing(spec) == ParamPassing::Collection) {
    out.push_back({kParamsCppType, params_arg_name(spec)});
  } else {
    for (const auto& a : spec.params) out.push_back({cpp_type_of(a), a.cpp_name});
  }
  return out;
}

std::string forward_return_type(const ProblemSpec& spec) {
  return (spec.outputs.size() == 1 && !spec.output_is_tuple) ? "torch::Tensor" : "std::vector<torch::Tensor>";
}

std::string forward_signature(const ProblemSpec& spec) {
  std::string s = forward_return_type(spec) + " forward(";
  bool first = true;
  for (const auto& p : forward_params(spec)) {
    if (!first) s += ", ";
    s += p.cpp_type + " " + p.name;
    first = false;
  }
  return s + ")";
}

}  // namespace kagent
