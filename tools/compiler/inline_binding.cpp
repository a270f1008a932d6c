#include "compiler/inline_binding.h"

#include <fmt/format.h>

namespace kagent {

namespace {

// Types the dispatcher takes as they are pass through; the others are converted on the way
// in (dispatcher -> the function's own type) and on the way out.
constexpr std::string_view kWrapper = R"cpp(
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kagent_inline {
template <class T> using bare = std::remove_cv_t<std::remove_reference_t<T>>;

template <class T, class = void> struct map {  // what the dispatcher takes as it is
  using type = T;
  static T in(const type& v) { return v; }
  static type out(T v) { return v; }
};
template <class T> struct map<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using type = int64_t;
  static T in(type v) { return static_cast<T>(v); }
  static type out(T v) { return static_cast<type>(v); }
};
template <class T> struct map<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  using type = double;
  static T in(type v) { return static_cast<T>(v); }
  static type out(T v) { return static_cast<type>(v); }
};
template <class E> struct map<std::vector<E>, std::enable_if_t<!std::is_same_v<typename map<E>::type, E>>> {
  using type = std::vector<typename map<E>::type>;
  static std::vector<E> in(const type& v) {
    std::vector<E> o;
    o.reserve(v.size());
    for (const auto& x : v) o.push_back(map<E>::in(x));
    return o;
  }
  static type out(const std::vector<E>& v) {
    type o;
    o.reserve(v.size());
    for (const auto& x : v) o.push_back(map<E>::out(x));
    return o;
  }
};
template <class E> struct map<std::optional<E>, std::enable_if_t<!std::is_same_v<typename map<E>::type, E>>> {
  using type = std::optional<typename map<E>::type>;
  static std::optional<E> in(const type& v) { return v ? std::optional<E>(map<E>::in(*v)) : std::nullopt; }
  static type out(const std::optional<E>& v) { return v ? type(map<E>::out(*v)) : std::nullopt; }
};

// A tuple or pair of numbers (pybind takes a Python tuple for `std::tuple<int, int> stride`):
// the dispatcher has no tuple inputs, so it takes a list of the elements' common type.
template <class T> constexpr bool number_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <class... E> constexpr bool numbers_v = sizeof...(E) > 0 && (number_v<E> && ...) &&
    (std::is_same_v<typename map<std::tuple_element_t<0, std::tuple<E...>>>::type, typename map<E>::type> && ...);
template <class Tup, class... E> struct numbers_map {
  using type = std::vector<typename map<std::tuple_element_t<0, std::tuple<E...>>>::type>;
  static Tup in(const type& v) {
    TORCH_CHECK(v.size() == sizeof...(E), "expected ", sizeof...(E), " numbers, got ", v.size());
    return in_at(v, std::index_sequence_for<E...>{});
  }
  template <std::size_t... I> static Tup in_at(const type& v, std::index_sequence<I...>) { return Tup{map<E>::in(v[I])...}; }
  static type out(const Tup& t) {
    return std::apply([](const E&... x) { return type{map<E>::out(x)...}; }, t);
  }
};
template <class... E> struct map<std::tuple<E...>, std::enable_if_t<numbers_v<E...>>> : numbers_map<std::tuple<E...>, E...> {};
template <class A, class B> struct map<std::pair<A, B>, std::enable_if_t<numbers_v<A, B>>> : numbers_map<std::pair<A, B>, A, B> {};

// The op's result type; void stays void (map<void> would declare `const void&` parameters).
template <class R> struct result_of { using type = typename map<bare<R>>::type; };
template <> struct result_of<void> { using type = void; };

template <class Sig> struct wrap;
template <class R, class... A> struct wrap<R (*)(A...)> {
  using result = typename result_of<R>::type;
  template <R (*F)(A...)> static result call(typename map<bare<A>>::type... a) {
    return invoke<F>(std::index_sequence_for<A...>{}, a...);
  }
  template <R (*F)(A...), std::size_t... I>
  static result invoke(std::index_sequence<I...>, const typename map<bare<A>>::type&... a) {
    std::tuple<bare<A>...> args{map<bare<A>>::in(a)...};  // lvalues, so T& parameters bind too
    if constexpr (std::is_void_v<R>) {
      F(std::forward<A>(std::get<I>(args))...);
    } else {
      return map<bare<R>>::out(F(std::forward<A>(std::get<I>(args))...));
    }
  }
};
template <class R, class... A> struct wrap<R (*)(A...) noexcept> : wrap<R (*)(A...)> {};
}  // namespace kagent_inline
)cpp";

// The shared binding's half (shared_binding.h): the same conversions for a function whose
// address arrives at run time, so one compiled binding serves every answer that declares the
// same functions. A lambda holding the pointer is a functor to torch::Library::def, which
// infers the same schema from its parameters as from wrap<...>::call's.
constexpr std::string_view kRuntimeWrapper = R"cpp(
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kagent_inline {
template <class Sig> struct runtime_wrap;
template <class R, class... A> struct runtime_wrap<R (*)(A...)> {
  using result = typename result_of<R>::type;
  template <std::size_t... I>
  static result invoke(R (*f)(A...), std::index_sequence<I...>, const typename map<bare<A>>::type&... a) {
    std::tuple<bare<A>...> args{map<bare<A>>::in(a)...};
    if constexpr (std::is_void_v<R>) {
      f(std::forward<A>(std::get<I>(args))...);
    } else {
      return map<bare<R>>::out(f(std::forward<A>(std::get<I>(args))...));
    }
  }
  static void def(torch::Library& m, const char* name, void* fn) {
    const auto f = reinterpret_cast<R (*)(A...)>(fn);
    m.def(name, [f](typename map<bare<A>>::type... a) -> result {
      return invoke(f, std::index_sequence_for<A...>{}, a...);
    });
  }
};
template <class R, class... A> struct runtime_wrap<R (*)(A...) noexcept> : runtime_wrap<R (*)(A...)> {};
}  // namespace kagent_inline

// Registers the slots' functions as <ns>::<names[i]>; null, or what went wrong. A namespace
// registered before (the same answer loaded again) is left as it is.
extern "C" __attribute__((visibility("default"))) const char* kagent_register(const char* ns, int n,
                                                                              const char* const* names,
                                                                              void* const* fns) {
  using def_fn = void (*)(torch::Library&, const char*, void*);
  static const def_fn defs[] = {{DEFS}};
  static std::mutex mutex;
  // Never destroyed: the ops stay registered for the process's life, as TORCH_LIBRARY's do.
  static auto* libraries = new std::map<std::string, std::unique_ptr<torch::Library>>();
  static std::string error;
  std::lock_guard<std::mutex> hold(mutex);
  try {
    if (n != static_cast<int>(sizeof(defs) / sizeof(defs[0])))
      throw std::invalid_argument("kagent_register: this binding has " + std::to_string(sizeof(defs) / sizeof(defs[0])) +
                                  " functions, not " + std::to_string(n));
    if (libraries->count(ns)) return nullptr;
    auto library = std::make_unique<torch::Library>(torch::Library::DEF, ns, std::nullopt, __FILE__, __LINE__);
    for (int i = 0; i < n; ++i) defs[i](*library, names[i], fns[i]);
    libraries->emplace(ns, std::move(library));
    return nullptr;
  } catch (const std::exception& e) {
    error = e.what();
    return error.c_str();
  }
}

// Each slot referenced once, weakly, so that the object file names its mangled symbol (the
// parameter list the answer's definition must match); the reference resolves to null.
{PROBES}
)cpp";

}  // namespace

std::string shared_binding_suffix(size_t slots) {
  std::string defs, probes;
  for (size_t i = 0; i < slots; ++i) {
    defs += fmt::format("{}&kagent_inline::runtime_wrap<decltype(&::kagent_f{})>::def", i ? ", " : "", i);
    probes += fmt::format(
        "extern decltype(::kagent_f{0}) kagent_f{0} __attribute__((weak));\n"
        "extern \"C\" __attribute__((used)) void* kagent_probe_{0}() {{ return reinterpret_cast<void*>(&::kagent_f{0}); }}\n",
        i);
  }
  std::string runtime(kRuntimeWrapper);
  runtime.replace(runtime.find("{DEFS}"), 6, defs);
  runtime.replace(runtime.find("{PROBES}"), 8, probes);
  return fmt::format("\n{}\n{}{}", kInlineBindingBanner, kWrapper, runtime);
}

std::string function_getters(const std::vector<std::string>& functions) {
  std::string out = fmt::format("\n{}\n", kInlineBindingBanner);
  for (size_t i = 0; i < functions.size(); ++i)
    out += fmt::format(
        "extern \"C\" __attribute__((visibility(\"default\"))) void* kagent_fn_{}() {{ return "
        "reinterpret_cast<void*>(&::{}); }}\n",
        i, functions[i].substr(functions[i].find('=') + 1));
  return out;
}

std::string inline_op_name(const std::string& function) { return function.substr(0, function.find('=')); }

std::string inline_binding_suffix(const std::vector<std::string>& functions, std::string_view op_namespace) {
  std::string defs;
  for (const auto& f : functions)
    defs += fmt::format("  m.def(\"{0}\", &::kagent_inline::wrap<decltype(&::{1})>::call<&::{1}>);\n", inline_op_name(f),
                        f.substr(f.find('=') + 1));
  return fmt::format("\n{}\n{}\nTORCH_LIBRARY({}, m) {{\n{}}}\n", kInlineBindingBanner, kWrapper, op_namespace, defs);
}

}  // namespace kagent
