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

}  // namespace

std::string inline_op_name(const std::string& function) { return function.substr(0, function.find('=')); }

std::string inline_binding_suffix(const std::vector<std::string>& functions, std::string_view op_namespace) {
  std::string defs;
  for (const auto& f : functions)
    defs += fmt::format("  m.def(\"{0}\", &::kagent_inline::wrap<decltype(&::{1})>::call<&::{1}>);\n", inline_op_name(f),
                        f.substr(f.find('=') + 1));
  return fmt::format("\n{}\n{}\nTORCH_LIBRARY({}, m) {{\n{}}}\n", kInlineBindingBanner, kWrapper, op_namespace, defs);
}

}  // namespace kagent
