// Value checks for command-line options, checked while the command line is parsed, with
// messages in plain words: CLI11 puts the option's name in front ("--samples: 'abc' is not a
// number"). CLI11's own checks say "Value abc not in range 1 to 1024" for a word; these do not.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace kagent::cli {

// A whole number in [lo, hi].
inline CLI::Validator whole_number(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max()) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is too large", s);
        if (ec != std::errc() || end != s.data() + s.size()) {
          char* e = nullptr;
          (void)std::strtod(s.c_str(), &e);
          const bool numeric = !s.empty() && e == s.c_str() + s.size();
          return fmt::format("'{}' is not {}", s, numeric ? "a whole number" : "a number");
        }
        if (v < lo) return fmt::format("'{}' is too small (at least {})", s, lo);
        if (v > hi) return fmt::format("'{}' is too large (at most {})", s, hi);
        return {};
      },
      "");
}

// A finite number, at least `lo` (more than `lo` when `above`).
inline CLI::Validator number_from(double lo, bool above = false) {
  return CLI::Validator(
      [lo, above](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return fmt::format("'{}' is not a number", s);
        if (above && !(v > lo)) return fmt::format("'{}' must be more than {}", s, lo);
        if (!above && v < lo) return fmt::format("'{}' is too small (at least {})", s, lo);
        return {};
      },
      "");
}

// A finite number from `lo` to `hi`.
inline CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return fmt::format("'{}' is not a number", s);
        if (v < lo || v > hi) return fmt::format("'{}' is not from {} to {}", s, lo, hi);
        return {};
      },
      "");
}

// One of a fixed set of words.
inline CLI::Validator one_of(std::vector<std::string> words) {
  std::string list;
  for (const auto& w : words) {
    if (!list.empty()) list += ", ";
    list += w;
  }
  return CLI::Validator(
      [words, list](std::string& s) -> std::string {
        for (const auto& w : words)
          if (s == w) return {};
        return fmt::format("'{}' is not one of {}", s, list);
      },
      "");
}

}  // namespace kagent::cli
