#include "checker/tolerance.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kagent {

Tolerance default_tolerance(c10::ScalarType dtype, const std::string& preset) {
  using c10::ScalarType;
  if (preset == kTolerance2025) {
    if (dtype == ScalarType::Float || dtype == ScalarType::ComplexFloat) return {1e-4, 1e-4};
    if (dtype == ScalarType::BFloat16) return {1e-2, 1e-2};
  } else if (preset != kToleranceV01) {
    throw std::invalid_argument("unknown tolerance preset '" + preset + "' (" + kToleranceV01 + ", " + kTolerance2025 +
                                ")");
  }
  switch (dtype) {
    case ScalarType::Float:
    case ScalarType::ComplexFloat:
      return {1e-2, 1e-2};
    case ScalarType::Half:
    case ScalarType::ComplexHalf:
      return {1e-2, 1e-2};
    case ScalarType::BFloat16:
      return {2e-2, 2e-2};
    case ScalarType::Double:
    case ScalarType::ComplexDouble:
      return {1e-5, 1e-5};
    case ScalarType::Float8_e4m3fn:
    case ScalarType::Float8_e4m3fnuz:
      return {1.25e-1, 1.25e-1};
    case ScalarType::Float8_e5m2:
    case ScalarType::Float8_e5m2fnuz:
      return {2.5e-1, 2.5e-1};
    default:
      break;
  }
  if (c10::isFloatingType(dtype) || c10::isComplexType(dtype)) return {1e-2, 1e-2};  // other exotic floats
  return {0, 0};  // integers, bool: exact
}

namespace {
void validate(const std::optional<double>& v, const char* name) {
  if (v && (!std::isfinite(*v) || *v < 0))
    throw std::invalid_argument(std::string("tolerance ") + name + " must be finite and >= 0, got " +
                                std::to_string(*v));
}
}  // namespace

Tolerance resolve_tolerance(const ToleranceConfig& config, c10::ScalarType dtype) {
  validate(config.atol, "atol");
  validate(config.rtol, "rtol");
  Tolerance t = default_tolerance(dtype, config.preset);
  if (c10::isFloatingType(dtype) || c10::isComplexType(dtype)) {
    if (config.atol) t.atol = *config.atol;
    if (config.rtol) t.rtol = *config.rtol;
  }
  return t;
}

}  // namespace kagent
