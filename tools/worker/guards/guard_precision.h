// Guard precision_lowered: an fp32 problem computed in half, bf16 or TF32 still passes the
// atol/rtol comparison (1e-2 for fp32), so both the candidate and eager PyTorch are measured
// against an fp64 run of the reference (model and inputs cast to double) and compared.
//
// The rule: reject when the candidate's relative L2 error against fp64 is above `floor` AND
// above `ratio` times eager's. Measured (CPU, fp64 truth; Linear layers with nn.Linear's
// zero-mean init, torch.rand / torch.randn inputs, K = 517 and 4096):
//   eager fp32 GEMM                     2.5e-7 .. 2.6e-7
//   fp32 with one running sum over K    4.1e-7 .. 1.1e-6   (1.7-4.3x eager; 9.9x when all
//                                        products are positive: the worst summation order)
//   TF32 or fp16 inputs, fp32 sums      2.5e-4 .. 2.8e-4   (~1000x)
//   bf16 inputs                         2.0e-3 .. 2.2e-3   (~8000x)
//   softmax with a fast exp (+-2 ulp)   0.7x eager;  GELU via the tanh approximation: 2000x
// Tiled fp32 kernels differ from eager by summation order only (at most ~10x), and a conv
// candidate in fp32 is *more* exact than eager's cuDNN conv, which uses TF32 by default, so
// ratio 64 leaves a wide margin against false rejects; the floor (170 fp32 ulps, relative)
// keeps results whose errors are all tiny from being judged on the ratio of two tiny numbers.
// What it misses on purpose: a TF32 GEMM over all-positive operands (5e-6, 63x) stays under
// both bounds; precision is only lowered as far as fp32 rounding would go anyway there.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "result/eval_result.h"
#include "worker/python/python_runtime.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// ||got - truth|| / ||truth|| in float64 over the elements where both are finite; nullopt
// when that means nothing (shapes differ, no finite element, or truth is all zero).
std::optional<double> relative_l2_error(const at::Tensor& got, const at::Tensor& truth);

// The reference model run in float64 on `inputs` (kagent_worker.py reference_fp64); nullopt with
// `why` set when the model gives no float64 truth (an op without a double kernel, a cast inside).
std::optional<std::vector<at::Tensor>> reference_fp64(PythonRuntime& py, PyObject* model, const Values& inputs,
                                                      std::string& why);

// The rule above.
bool precision_lowered(double candidate_error, double eager_error, double ratio, double floor);

// Outputs parallel to each other; only floating outputs of the reference (fp32, fp16, bf16)
// are judged. The first output the rule catches, as a reject.
std::optional<GuardFinding> check_precision(const std::vector<at::Tensor>& candidate,
                                            const std::vector<at::Tensor>& eager,
                                            const std::vector<at::Tensor>& truth, double ratio, double floor);

}  // namespace kagent::worker
