// The code kagent appends to the C++ part of a load_inline extension so that each listed
// function becomes an op of the c10 dispatcher (where torch's load_inline would generate a
// pybind11 module). The functions' C++ signatures are read by the compiler, not by kagent:
// a template maps each parameter and the result to what the dispatcher passes (int ->
// int64_t, float -> double, std::vector<int> -> int[], optionals, Tensors as they are),
// so the schema is inferred from the declarations the answer already wrote. A signature
// the dispatcher cannot take fails to compile inside this code, and that failure means
// "fall back to torch's load_inline", not a compile error of the answer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kagent {

// First line of the appended code; errors after it are kagent's binding, not the answer's.
inline constexpr std::string_view kInlineBindingBanner =
    "// ---- appended by kagent: the listed functions as dispatcher ops (not part of the answer) ----";

// `op_namespace` must be a C++ identifier, unique per extension (content hash); `functions`
// are identifiers declared in the C++ sources, or "name=function" where the answer's own
// PYBIND11_MODULE binds a function under another name.
std::string inline_binding_suffix(const std::vector<std::string>& functions, std::string_view op_namespace);

// The C++ part of a binding shared by answers (shared_binding.h), after the head and the
// normalised declarations (binding_declarations.h) with `slots` functions kagent_f0...:
// `extern "C" const char* kagent_register(ns, n, names, fns)` registers function pointers
// given at run time as <ns>::<name> ops, converting as inline_binding_suffix's code does.
std::string shared_binding_suffix(size_t slots);

// Appended to cuda.cu when main.cpp is a shared binding: `extern "C" void* kagent_fn_<i>()`,
// the address of the i-th listed function, exported (the answer's own symbols are hidden).
std::string function_getters(const std::vector<std::string>& functions);

// The op's (and the Python attribute's) name of a `functions` entry.
std::string inline_op_name(const std::string& function);

}  // namespace kagent
