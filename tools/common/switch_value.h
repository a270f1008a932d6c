// On/off and whole-number environment values as every kagent switch reads them.
#pragma once

#include <array>
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

// kagent's on/off switches and whole-number settings in the environment (README, "Configuration"):
// the parts that read them name them from here, and the command line checks each one before
// anything starts (cli/environment_settings.cpp), so that a wrong value is a usage error there.
// The readers' warning below is for processes the command line did not check (the worker run alone).
inline constexpr const char* kSharedBindingEnv = "KAGENT_SHARED_BINDING";
inline constexpr const char* kPrefixPreprocessEnv = "KAGENT_PREFIX_PREPROCESS";
inline constexpr const char* kMicroHeaderEnv = "KAGENT_MICRO_HEADER";
inline constexpr const char* kMicroFullStdEnv = "KAGENT_MICRO_FULL_STD";
inline constexpr const char* kProfilerKeepSessionEnv = "KAGENT_PROFILER_KEEP_SESSION";
inline constexpr const char* kProfilerSizeRangesEnv = "KAGENT_PROFILER_SIZE_RANGES";
inline constexpr std::array kEnvironmentSwitches{kSharedBindingEnv,       kPrefixPreprocessEnv,   kMicroHeaderEnv,
                                                 kMicroFullStdEnv,        kProfilerKeepSessionEnv, kProfilerSizeRangesEnv};

// A whole number from min to max, the whole text; nullopt otherwise.
inline std::optional<long> whole_number_value(std::string_view text, long min, long max) {
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size() && value >= min && value <= max) return value;
  return std::nullopt;
}

struct EnvironmentNumber {
  const char* name;
  long min, max;
};
inline constexpr EnvironmentNumber kProfilerPassesEnv{"KAGENT_PROFILER_PASSES", 1, 16};
inline constexpr EnvironmentNumber kProfilerPerKernelLaunchesEnv{"KAGENT_PROFILER_PER_KERNEL_LAUNCHES", 0, 4096};
inline constexpr std::array kEnvironmentNumbers{kProfilerPassesEnv, kProfilerPerKernelLaunchesEnv};

// A whole number from min to max in the environment variable `name`: unset or empty gives
// `fallback`; anything else (not a number, trailing text, out of range) is said on stderr and
// gives `fallback` too. Callers read it once per process.
inline long environment_number(const char* name, long fallback, long min, long max) {
  const char* env = std::getenv(name);
  if (!env || !*env) return fallback;
  if (const auto value = whole_number_value(env, min, max)) return *value;
  std::fprintf(stderr, "kagent: warning: %s must be a whole number from %ld to %ld, not '%s': using %ld\n", name, min,
               max, env, fallback);
  return fallback;
}

inline long environment_number(const EnvironmentNumber& n, long fallback) {
  return environment_number(n.name, fallback, n.min, n.max);
}

}  // namespace kagent
