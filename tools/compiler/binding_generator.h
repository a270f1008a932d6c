// The code kagent adds around a native candidate so the worker can call its `forward`
// through the c10 dispatcher. Two parts, split so the expensive one is cached:
//  - the candidate suffix, appended to the candidate's own file (its line numbers stay
//    unchanged): compile-time checks of `forward` with greppable static_assert messages,
//    an entry function with the exact expected C++ signature, and the op namespace and
//    schema as data;
//  - the host registration (torch/library.h), a separate .cpp that depends only on the
//    signature's types, compiled once and cached, linked into every candidate's .so.
#pragma once

#include <string>
#include <string_view>

#include "problem/problem_spec.h"

namespace kagent {

// Marker strings the static_asserts start with; diagnostics map them to reasons.
inline constexpr std::string_view kMissingForwardMarker = "kagent: missing forward";
inline constexpr std::string_view kSignatureMarker = "kagent: forward must";
// First line of the candidate suffix; everything after it is kagent's, not the user's.
inline constexpr std::string_view kSuffixBanner =
    "// ---- appended by kagent: forward checks and entry point (not part of the candidate) ----";

struct Binding {
  std::string op_namespace;     // "kagent_<16 hex>"
  std::string op_name;          // "kagent_<16 hex>::forward"
  std::string schema;           // "forward(Tensor x, float scale) -> Tensor"
  std::string candidate_suffix; // appended to the candidate's source
  std::string host_source;      // registration .cpp; a function of the types only
  std::string host_key;         // what host_source depends on, for its cache key
  bool uses_params_header = false;  // forward takes a kagent::Params: <kagent/params.h> must be pre-included
};

// Schema type names and C++ types the entry point uses for a spec.
std::string schema_for(const ProblemSpec& spec);

// Whether the text declares or defines a function named `forward` at all (comments and
// string literals ignored, `std::forward<...>`, `x.forward(` and `::forward` calls not
// counted). Only chooses which static_assert message a failed check shows.
bool source_mentions_forward(std::string_view source);

// `op_namespace` must be a C++ identifier, unique per candidate (content hash).
// Throws std::invalid_argument when a forward argument has an unsupported type.
Binding generate_binding(const ProblemSpec& spec, std::string_view source, std::string_view op_namespace);

}  // namespace kagent
