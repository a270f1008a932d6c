// Enums that travel as JSON strings: one table of (value, name) pairs per enum, looked up
// both ways here, so each enum's names are written once.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace kagent {

template <class E, std::size_t N>
using EnumNames = std::array<std::pair<E, const char*>, N>;

// The name of `value`; `fallback` for a value missing from the table.
template <class E, std::size_t N>
std::string enum_name(const EnumNames<E, N>& table, E value, const char* fallback) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return fallback;
}

// The value named `name`; throws std::invalid_argument "unknown <what> '<name>'".
template <class E, std::size_t N>
E enum_value(const EnumNames<E, N>& table, std::string_view name, const char* what) {
  for (const auto& [v, n] : table)
    if (name == n) return v;
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(name) + "'");
}

}  // namespace kagent
