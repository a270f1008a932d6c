// <kagent/params.h>: the one argument that carries a model's parameters and buffers to a
// native candidate whose model has more than kMaxPositionalParams of them (forward_signature.h).
// kagent writes it into the compile cache and pre-includes it, so the candidate needs no
// #include; `params["layer1.0.conv1.weight"]` is the tensor of that state_dict entry.
//
// It costs the compile nothing that grows with the model: the tensors cross the dispatcher as
// one Tensor[] and the names are one array of string literals in the appended entry point,
// where the positional form needed a template instantiated over hundreds of arguments.
#pragma once

#include <string_view>

namespace kagent {

// Include path of the header inside its folder.
inline constexpr std::string_view kParamsHeaderName = "kagent/params.h";

std::string_view params_header_text();

}  // namespace kagent
