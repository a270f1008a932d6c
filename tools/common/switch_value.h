// On/off and whole-number environment values as every kagent switch reads them.
#pragma once

#include <charconv>
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

// A whole number from min to max in the environment variable `name`: unset or empty gives
// `fallback`; anything else (not a number, trailing text, out of range) is said on stderr and
// gives `fallback` too. Callers read it once per process.
inline long environment_number(const char* name, long fallback, long min, long max) {
  const char* env = std::getenv(name);
  if (!env || !*env) return fallback;
  const std::string_view text(env);
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size() && value >= min && value <= max) return value;
  std::fprintf(stderr, "kagent: warning: %s must be a whole number from %ld to %ld, not '%s': using %ld\n", name, min,
               max, env, fallback);
  return fallback;
}

}  // namespace kagent
