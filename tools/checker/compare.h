// compare_output: one candidate output against the reference's, as an OutputCheck.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "checker/tolerance.h"
#include "result/eval_result.h"

namespace kagent {

// Checks, in order, and stops at the first that fails:
//   1. both defined, same shape   -> reason::kShape, "shape [4, 8] != expected [4, 16]"
//   2. same dtype                 -> reason::kDtype, "dtype torch.float16 != expected torch.float32"
//   3. values: an element passes when |got - exp| <= atol + rtol * |exp| (exact for integer
//      and bool), or when both are non-finite and equal (same inf, or both NaN).
//      A non-finite candidate value where the reference is finite -> reason::kNonFinite;
//      any other failing element                                   -> reason::kValues.
// Reported: max abs error and max rel error over the elements where both values are finite
// (rel error only where |reference| > atol: near zero only the absolute error means anything),
// `mismatched` = failing elements (non-finite ones included; the message gives their share),
// `samples` = up to
// max_samples failing elements, worst first (non-finite first, then by abs error), and
// `worst_index` = the first sample, or where the abs error is largest when all pass.
// Complex values are compared by magnitude of the difference; samples show magnitudes.
//
// Runs on the tensors' device (the candidate's output is moved to the reference's device
// when they differ) in float64, a chunk of 16M elements at a time, so its temporaries stay
// near 1 GB whatever the output's size; only a few scalars per chunk and the samples are
// copied to the host. Works on CPU tensors.
OutputCheck compare_output(const at::Tensor& got, const at::Tensor& expected, int output_index,
                           const ToleranceConfig& tolerances = {}, int max_samples = 5);

// Every output of a call against the reference's outputs, in order; nullopt when all match,
// else the first failing check (a different number of outputs: reason::kOutputCount).
std::optional<OutputCheck> first_mismatch(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                                          const ToleranceConfig& tolerance);
// The output-count check alone (first_mismatch's first step): nullopt when the counts agree.
std::optional<OutputCheck> output_count_mismatch(size_t got, size_t expected);

// Deep copies of tensors (undefined ones stay undefined).
std::vector<at::Tensor> clone_tensors(const std::vector<at::Tensor>& tensors);

// "[4, 16]"; also used for messages elsewhere.
std::string format_shape(c10::IntArrayRef sizes);
// "torch.float32"
std::string format_dtype(c10::ScalarType dtype);
// Row-major multi-dimensional index of a flat position in a tensor of `sizes`.
std::vector<int64_t> unravel_index(int64_t flat, c10::IntArrayRef sizes);

}  // namespace kagent
