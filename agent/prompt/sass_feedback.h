// The machine-code part of the feedback: one line per kernel from its SASS summary
// (result/eval_result.h SassKernel), the rules derived from it together with the profile and
// the problem, or the line saying why the SASS is missing. Every line is cut to a stated limit.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem/problem_spec.h"
#include "result/eval_result.h"

namespace kagent::prompt {

struct SassFeedbackLimits {
  size_t kernels = 8;        // kernel lines shown
  size_t line_bytes = 360;   // each kernel or finding line, cut with "[... N more bytes cut]"
  size_t findings = 4;       // rule lines shown
};

// "relu_vec4 (16 registers, 0 B shared, 0 B local): 9 instructions; global loads 1x128-bit;
//  global stores 1x128-bit; FP32 1 FFMA, 1 FMUL, 2 FADD; no tensor-core instruction; 1 branch"
std::string sass_kernel_line(const SassKernel& k);

// The rules, most important first:
//  - a memory-bound kernel (the profile's per-kernel call, else the candidate's) whose global
//    accesses are all 32-bit or narrower;
//  - a GEMM- or convolution-shaped problem (matmul, Linear, bmm, einsum, conv in its source)
//    where no kernel has a tensor-core instruction;
//  - local-memory loads or stores inside a loop (spills in the hot loop).
std::vector<std::string> sass_findings(const EvalResult& result, const ProblemSpec* spec);

// Whether the problem's reference does a matrix product or a convolution.
bool gemm_shaped(const ProblemSpec& spec);

// The `sass` section of feedback.txt: false when the compile made none (failed compile,
// kernelbench format), else {arch, missing ("" or why), kernels [{line}], kernels_more
// (count or false), findings [{text}]}.
nlohmann::json sass_variables(const EvalResult& result, const ProblemSpec* spec, const SassFeedbackLimits& limits);

}  // namespace kagent::prompt
