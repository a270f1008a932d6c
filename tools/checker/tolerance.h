// Tolerances for comparing a candidate's outputs with the reference's, per dtype.
// An element passes when |got - expected| <= atol + rtol * |expected|.
#pragma once

#include <string>

#include <c10/core/ScalarType.h>

#include "checker/tolerance_config.h"

namespace kagent {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Defaults per dtype (the reference's dtype decides), for the preset kernelbench-v0.1:
//   float32            1e-2 / 1e-2  KernelBench v0.1, so verdicts match published numbers.
//   float16            1e-2 / 1e-2  eps is 9.8e-4; 1e-2 allows ~10 ulp, enough for a
//                                   different reduction order with fp32 accumulation.
//   bfloat16           2e-2 / 2e-2  eps is 7.8e-3: one ulp of rounding already costs 0.8%,
//                                   two differently rounded steps cost ~1.6%, so 1e-2 would
//                                   fail kernels that are as right as the reference.
//   float64            1e-5 / 1e-5  double kernels are asked for double accuracy.
//   float8 (e4m3/e5m2) 1.25e-1 / 2.5e-1 one ulp of the format.
//   complex            as their real component type, on the complex magnitude.
//   integer, bool      exact (0 / 0).
// kernelbench-2025 differs in three: float32 1e-4, float16 1e-2, bfloat16 1e-2 (KernelBench's
// get_tolerance_for_precision). Throws std::invalid_argument for an unknown preset.
Tolerance default_tolerance(c10::ScalarType dtype, const std::string& preset = kToleranceV01);

// The tolerance for `dtype` under the config's preset with its overrides applied. Throws
// std::invalid_argument for an unknown preset or a negative or non-finite override.
Tolerance resolve_tolerance(const ToleranceConfig& config, c10::ScalarType dtype);

}  // namespace kagent
