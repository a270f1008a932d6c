// std::optional members in JSON: absent or null both mean "no value", and a missing value
// is written as null so every key is always present for readers of the files.
// Readers never trust a record to hold a number where one is expected: nlohmann writes a NaN
// or an infinity as null (a candidate's NaN output gives max_abs_error NaN), and a record from
// an older kagent or cut by hand may hold null anywhere. json.value(key, default) throws on
// such a null ("type must be number, but is null"), so the readers here and the macro below
// take null as "no value" instead.
#pragma once

#include <limits>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace kagent {

// The value, or null.
template <class T>
nlohmann::json json_or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <class T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  j[key] = json_or_null(v);
}

template <class T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key) && !j[key].is_null()) v = j[key].get<T>();
  else v.reset();
}

// Like json::value, but a null counts as absent.
template <class T>
T get_or(const nlohmann::json& j, const char* key, T fallback) {
  if (j.contains(key) && !j[key].is_null()) return j[key].get<T>();
  return fallback;
}

// A measured number read back: absent gives `fallback`; null gives NaN, since null is what a
// NaN or an infinity was written as (reading it as 0 would turn "not a number" into a perfect
// score). Other types as get_or.
template <class T>
T get_measured(const nlohmann::json& j, const char* key, T fallback) {
  if constexpr (std::is_floating_point_v<T>)
    if (j.contains(key) && j[key].is_null()) return std::numeric_limits<T>::quiet_NaN();
  return get_or(j, key, std::move(fallback));
}

}  // namespace kagent

// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT, with every member read by get_measured: an
// absent member keeps the default object's value, a null number reads as NaN, any other null
// as the default. (nlohmann's own macro throws on a null.) The functions are not inline: use it
// in the one .cpp whose header declares them, so every file that converts the type links to it.
#define KAGENT_JSON_FROM_MEASURED(v1) \
  nlohmann_json_t.v1 = ::kagent::get_measured(nlohmann_json_j, #v1, nlohmann_json_default_obj.v1);
#define KAGENT_DEFINE_JSON_NULL_SAFE(Type, ...)                                                          \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                          \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                             \
  }                                                                                                      \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {                        \
    const Type nlohmann_json_default_obj{};                                                              \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(KAGENT_JSON_FROM_MEASURED, __VA_ARGS__))                    \
  }
