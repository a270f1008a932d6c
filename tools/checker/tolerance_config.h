// The user's tolerance overrides, as plain data: they travel in the worker protocol's
// EvalOptions. checker/tolerance.h resolves them against a dtype's defaults.
#pragma once

#include <optional>

namespace kagent {

// A set atol/rtol replaces the default for every floating (and complex) dtype; integer and
// bool outputs stay exact because "close" means nothing there.
struct ToleranceConfig {
  std::optional<double> atol;
  std::optional<double> rtol;
};

}  // namespace kagent
