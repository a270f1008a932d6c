// An on/off environment value as every kagent switch reads it.
#pragma once

#include <optional>
#include <string_view>

namespace kagent {

// on, 1, true, yes -> true; off, 0, false, no -> false; anything else: nullopt (the caller says
// what it does with a bad value: refuse it, or warn and keep its default).
inline std::optional<bool> switch_value(std::string_view text) {
  if (text == "on" || text == "1" || text == "true" || text == "yes") return true;
  if (text == "off" || text == "0" || text == "false" || text == "no") return false;
  return std::nullopt;
}

}  // namespace kagent
