// Guard precision_lowered: an fp32 problem computed in half, bf16 or TF32 still passes the
// 1e-2 tolerance, so the candidate and eager PyTorch are both measured against a float64 run
// of the reference, on inputs made for it (kagent_worker/precision.py): fresh, cut to a few
// hundred MB when the problem is larger, and with random signs (same-signed terms hide input
// rounding: an fp16 GEMM of torch.rand values is only 3e-5 off, of mixed-sign values 5e-4).
//
// The error of an output is its mean relative error against the truth over the elements
// where |truth| > 0.1 * rms(truth) (both finite). Two rules reject:
//   explained  the candidate is more than `precision_excess` times eager's error, and a truth
//              computed from inputs (and/or parameters) rounded to 10 mantissa bits (fp16,
//              TF32) or 7 (bf16) explains it: the candidate's error against that truth is at
//              most 1/`precision_explained` of its error against the exact one;
//   excess     the candidate's error is over `precision_floor` and over `precision_ratio`
//              times eager's (half-precision sums or outputs, whatever was rounded).
// Measured on the CPU (fp64 truth, K = 4096 GEMM, mixed-sign inputs): eager fp32 4e-7; fp32
// with a split or running sum over K 0.9-1.0x eager; fp16 or TF32 inputs 4.8e-4 (1100x); bf16
// inputs 3.8e-3 (9000x); same-signed inputs hide it (fp16 inputs 68x, a few x on the GPU,
// where eager's own error is larger). A conv candidate in bf16 is only ~8x eager's cuDNN
// conv, which uses TF32 by default; the explained rule catches it, and an honest fp32 conv
// (more exact than eager) passes both. An honest fp32 kernel with another summation order
// stays near eager; a formula approximation (GELU through tanh) is not explained by rounded
// inputs and stays under the excess floor unless it is far off.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "checker/tolerance_config.h"
#include "result/eval_result.h"
#include "worker/protocol/guard_options.h"
#include "worker/python/python_runtime.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// The mean relative error above; nullopt when no element qualifies or shapes differ.
std::optional<double> mean_relative_error(const at::Tensor& got, const at::Tensor& truth);

// The float64 run of the reference on `inputs` (kagent_worker/precision.py), optionally with
// inputs and/or parameters rounded first (`rounding` "tf32" | "bfloat16", `scope` "all" |
// "inputs" | "params"); nullopt with `why` set when the model gives no float64 truth.
std::optional<std::vector<at::Tensor>> reference_fp64(PythonRuntime& py, PyObject* model, const Values& inputs,
                                                      std::string& why, const std::string& rounding = "",
                                                      const std::string& scope = "all");

// One output's errors: the candidate's and eager's against the exact truth, and the
// candidate's against each rounding hypothesis tried ("tf32 all", "bfloat16 params", ...).
struct PrecisionErrors {
  double candidate = 0, eager = 0;
  std::vector<std::pair<std::string, double>> hypotheses;
};
// Whether the candidate's error is large enough to try the hypotheses.
bool worth_explaining(const PrecisionErrors& e, const GuardOptions& opts);
// The rules above; the reason when one rejects.
std::optional<std::string> precision_lowered(const PrecisionErrors& e, const GuardOptions& opts);

// The whole guard: inputs, candidate and eager runs, the truths, the rules on every floating
// output. `note` says what it measured on (or why it did not run). `device`: where the inputs
// are made ("cuda" in the worker; tests use "cpu"). A finding's kernelbench action is "flag"
// when the output is still within `tolerance` of the float64 truth (KernelBench's rules allow
// lower precision inside the tolerance), else "reject".
std::optional<GuardFinding> check_precision(PythonRuntime& py, ProblemSession& problem, PyObject* reference_model,
                                            Runner& candidate, Runner& reference, int64_t seed,
                                            const GuardOptions& opts, const ToleranceConfig& tolerance,
                                            std::string& note, const std::string& device = "cuda");

}  // namespace kagent::worker
