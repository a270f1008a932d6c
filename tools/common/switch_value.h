// An on/off environment value as every kagent switch reads it.
#pragma once

#include <cstdio>
#include <cstdlib>
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

// The switch `name` from the environment: unset or empty gives `fallback`; a value switch_value
// does not know is said on stderr and gives `fallback` too. Callers read it once per process.
inline bool environment_switch(const char* name, bool fallback) {
  const char* env = std::getenv(name);
  if (!env || !*env) return fallback;
  if (const auto v = switch_value(env)) return *v;
  std::fprintf(stderr, "kagent: warning: %s must be on or off (1/0), not '%s': using %s\n", name, env,
               fallback ? "on" : "off");
  return fallback;
}

}  // namespace kagent
