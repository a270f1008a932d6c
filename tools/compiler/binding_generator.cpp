#include "compiler/binding_generator.h"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "problem/forward_signature.h"

namespace kagent {

namespace {

bool is_params(const std::string& cpp_type) { return cpp_type == kParamsCppType; }

// C++ type of an entry parameter: at:: rather than torch:: so the suffix needs only ATen.
// The parameters collection crosses the dispatcher as one Tensor[].
std::string entry_type(const std::string& cpp_type) {
  if (cpp_type == "torch::Tensor") return "at::Tensor";
  if (is_params(cpp_type)) return "at::TensorList";
  return cpp_type;  // int64_t, double, bool
}

// The type the candidate's `forward` is called with (an lvalue of it).
std::string call_type(const std::string& cpp_type) {
  return is_params(cpp_type) ? "kagent::Params" : entry_type(cpp_type);
}

std::string schema_type(const std::string& cpp_type) {
  if (cpp_type == "torch::Tensor") return "Tensor";
  if (cpp_type == "int64_t") return "int";
  if (cpp_type == "double") return "float";
  if (cpp_type == "bool") return "bool";
  if (is_params(cpp_type)) return "Tensor[]";
  throw std::invalid_argument("binding: unsupported forward parameter type " + cpp_type);
}


// A C++ string literal's body.
std::string escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

// Removes comments and the contents of string/char literals, keeping everything else.
std::string strip_comments_and_literals(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      auto end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
      o += ' ';
    } else if (s[i] == '"' || s[i] == '\'') {
      char q = s[i++];
      while (i < s.size() && s[i] != q && s[i] != '\n') i += (s[i] == '\\') ? 2 : 1;
      ++i;
      o += "\"\"";
    } else {
      o += s[i++];
    }
  }
  return o;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

bool source_mentions_forward(std::string_view source) {
  const std::string s = strip_comments_and_literals(source);
  constexpr std::string_view word = "forward";
  for (size_t pos = s.find(word); pos != std::string::npos; pos = s.find(word, pos + 1)) {
    if (pos > 0 && ident_char(s[pos - 1])) continue;
    size_t after = pos + word.size();
    if (after < s.size() && ident_char(s[after])) continue;
    while (after < s.size() && std::isspace(static_cast<unsigned char>(s[after]))) ++after;
    if (after >= s.size() || s[after] != '(') continue;  // std::forward<T>(x), a variable, ...
    size_t before = pos;
    while (before > 0 && std::isspace(static_cast<unsigned char>(s[before - 1]))) --before;
    auto preceded_by = [&](std::string_view tok) {
      return before >= tok.size() && std::string_view(s).substr(before - tok.size(), tok.size()) == tok;
    };
    if (preceded_by(".") || preceded_by("::") || preceded_by("->")) continue;  // calls, not a definition
    return true;
  }
  return false;
}

std::string schema_for(const ProblemSpec& spec) {
  std::string s = "forward(";
  bool first = true;
  for (const auto& p : forward_params(spec)) {
    if (!first) s += ", ";
    s += schema_type(p.cpp_type) + " " + p.name;
    first = false;
  }
  // Always a list: how many outputs a candidate returns is checked at run time, where a
  // wrong count is a verdict (output_count) rather than a compile error.
  return s + ") -> Tensor[]";
}

Binding generate_binding(const ProblemSpec& spec, std::string_view source, std::string_view op_namespace) {
  const auto params = forward_params(spec);
  // The entry always returns a list (see schema_for), so any of Tensor, vector and tuple is
  // accepted here and the output count is judged when the candidate runs.
  const std::string ret = "std::vector<at::Tensor>";
  const std::string wanted = forward_signature(spec);

  // `types`: what the dispatcher passes; `call_types`: what `forward` is called with; they
  // differ only for the parameters collection, which the entry wraps in a kagent::Params.
  std::string types, call_types, entry_params, entry_args, wrap;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string t = entry_type(params[i].cpp_type);
    if (i) {
      types += ", ";
      call_types += ", ";
      entry_params += ", ";
      entry_args += ", ";
    }
    types += t;
    call_types += call_type(params[i].cpp_type);
    entry_params += fmt::format("{} a{}", t, i);
    if (is_params(params[i].cpp_type)) {
      wrap += fmt::format("  kagent::Params p{}(a{}, names);\n", i, i);
      entry_args += fmt::format("p{}", i);
    } else {
      entry_args += fmt::format("a{}", i);
    }
  }
  // The names, in the order the worker passes the tensors (state_dict order).
  std::string names_decl, entry_prologue;
  if (!wrap.empty()) {
    names_decl = "static constexpr const char* kagent_param_names[] = {\n";
    for (const auto& p : spec.params) names_decl += fmt::format("    \"{}\",\n", escape(p.name));
    names_decl += "};\n";
    entry_prologue = "  static const kagent::Params::Names names(kagent_param_names);\n" + wrap;
  }

  Binding b;
  b.uses_params_header = !wrap.empty();
  b.op_namespace = std::string(op_namespace);
  b.op_name = b.op_namespace + "::forward";
  b.schema = schema_for(spec);

  const std::string returns_text =
      std::string("torch::Tensor, std::vector<torch::Tensor> or std::tuple of torch::Tensor");
  const std::string call_msg =
      source_mentions_forward(source)
          ? fmt::format("{} be callable as: {}  (inputs in order, then parameters and buffers in state_dict order)",
                        kSignatureMarker, wanted)
          : fmt::format("{}: the file must define the host function {}", kMissingForwardMarker, wanted);
  const std::string ret_msg = fmt::format("{} return {}; expected: {}", kSignatureMarker, returns_text, wanted);

  const std::string to_result = std::string(R"cpp(template <class R> std::vector<at::Tensor> to_result(R&& r) {
  if constexpr (std::is_convertible_v<R&&, std::vector<at::Tensor>>) {
    return std::vector<at::Tensor>(std::forward<R>(r));
  } else if constexpr (tensor_tuple<std::decay_t<R>>::value) {
    return std::apply([](auto&&... t) { return std::vector<at::Tensor>{at::Tensor(t)...}; }, std::forward<R>(r));
  } else {
    return std::vector<at::Tensor>{at::Tensor(std::forward<R>(r))};
  }
})cpp");

  // The checks call `forward` unqualified with dependent arguments from a namespace that
  // declares no `forward`, so a missing or mismatched one is a SFINAE failure that the
  // static_asserts report, not a cascade of template errors.
  b.candidate_suffix = fmt::format(R"cpp(
{banner}
#include <ATen/core/Tensor.h>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
{params_include}
namespace {ns}_check {{
template <class... A> struct pack {{}};
template <class P, class = void> struct call {{
  static constexpr bool ok = false;
  using type = void;
}};
template <class... A>
struct call<pack<A...>, std::void_t<decltype(forward(std::declval<A&>()...))>> {{
  static constexpr bool ok = true;
  using type = decltype(forward(std::declval<A&>()...));
}};
template <class T> struct tensor_tuple : std::false_type {{}};
template <class... T>
struct tensor_tuple<std::tuple<T...>> : std::bool_constant<(std::is_convertible_v<T, at::Tensor> && ...)> {{}};

template <class R> constexpr bool returns_ok() {{
  return std::is_convertible_v<R, std::vector<at::Tensor>> || tensor_tuple<std::decay_t<R>>::value ||
         std::is_convertible_v<R, at::Tensor>;
}}

{to_result}
template <class... A> {ret} invoke(A&... a) {{
  using C = call<pack<A...>>;
  if constexpr (C::ok) {{
    if constexpr (returns_ok<typename C::type>()) {{
      return to_result(forward(a...));
    }} else {{
      return {ret}();
    }}
  }} else {{
    return {ret}();
  }}
}}

using expected = call<pack<{call_types}>>;
static_assert(expected::ok, "{call_msg}");
static_assert(!expected::ok || returns_ok<typename expected::type>(), "{ret_msg}");
}}  // namespace {ns}_check

{names_decl}
{ret} kagent_entry_forward({entry_params}) {{
{entry_prologue}  return {ns}_check::invoke({entry_args});
}}
extern "C" const char kagent_op_namespace[] = "{ns}";
extern "C" const char kagent_op_schema[] = "{schema}";
)cpp",
                                   fmt::arg("banner", kSuffixBanner), fmt::arg("ns", b.op_namespace),
                                   fmt::arg("ret", ret),
                                   fmt::arg("call_types", call_types), fmt::arg("call_msg", escape(call_msg)),
                                   fmt::arg("names_decl", names_decl),
                                   fmt::arg("params_include", b.uses_params_header ? "#include <kagent/params.h>\n" : ""), fmt::arg("entry_prologue", entry_prologue),
                                   fmt::arg("ret_msg", escape(ret_msg)), fmt::arg("to_result", to_result), fmt::arg("entry_params", entry_params),
                                   fmt::arg("entry_args", entry_args), fmt::arg("schema", escape(b.schema)));

  // Only the types matter here: the namespace and schema come from the candidate object.
  b.host_key = ret + "(" + types + ")";
  b.host_source = fmt::format(R"cpp(// kagent host registration for entry {key}
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <vector>

extern "C" const char kagent_op_namespace[];
extern "C" const char kagent_op_schema[];
{ret} kagent_entry_forward({types});

namespace {{
void kagent_define(torch::Library& m) {{ m.def(kagent_op_schema, &kagent_entry_forward); }}
// TORCH_LIBRARY with a namespace known only at load time (it is the candidate's hash).
const torch::detail::TorchLibraryInit kagent_library_init(torch::Library::DEF, &kagent_define, kagent_op_namespace,
                                                          std::nullopt, __FILE__, __LINE__);
}}  // namespace
)cpp",
                              fmt::arg("key", b.host_key), fmt::arg("ret", ret), fmt::arg("types", types));
  return b;
}

}  // namespace kagent
