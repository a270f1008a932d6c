// std::optional members in JSON: absent or null both mean "no value", and a missing value
// is written as null so every key is always present for readers of the files.
#pragma once

#include <optional>

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

}  // namespace kagent
