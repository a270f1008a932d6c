// The micro tier of the light <torch/extension.h> (ShimTier::Micro; the header and its support
// library are tools/compiler/micro/, README.md there). An answer's cuda.cu that uses only what
// micro_tensor.h declares is compiled without any torch header, and its library links the
// support library, which kagent builds once per toolchain against the real headers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"
#include "compiler/nvcc_command.h"

namespace kagent {

struct InlineCall;

// Where the micro header lives in the shim folder (torch/extension.h includes it).
inline constexpr std::string_view kMicroHeaderPath = "kagent/micro_tensor.h";

// micro_tensor.h's text and micro_support.cpp's (both compiled into kagent).
std::string_view micro_header_text();
std::string_view micro_support_source();

// Whether `sources` include no torch, ATen, c10, caffe2 or pybind11 header (nor Python.h) besides
// the three the shim replaces: any other would declare a second at::Tensor beside the micro one.
bool includes_only_shimmed_torch_headers(std::string_view sources);

// The line the Full flavour's shim puts before the micro header (MicroStd, extension_shim.h).
inline constexpr std::string_view kMicroFullStdDefine = "#define KAGENT_MICRO_FULL_STD 1\n";

// Whether an answer's CUDA code (comments aside) names something only the Full flavour's headers
// declare: a stream, std::function, a smart pointer, a map, a tuple, an exception class, ... or
// uses `using namespace std` or defines an operator<< (a TORCH_CHECK part the lean one cannot
// print). A false "no" costs a rebuild with the slim header, never a verdict.
bool micro_needs_full_std(std::string_view cuda_sources);

// KAGENT_MICRO_FULL_STD=1: every micro answer gets the Full flavour (as before the lean one;
// for comparisons, and a way back should the lean one ever cost more than it saves).
bool micro_full_std_forced();

// Whether the micro tier is on for this run: KAGENT_MICRO_HEADER (default 1; 0 turns it off).
bool micro_header_enabled();

// The support library (libkagent_micro_<key>.so, its SONAME the same), built once per toolchain
// into the compile cache with `base` (no shim: the real headers); nullopt when it cannot be built
// here (then no answer uses the micro tier). Its steps go to `steps`.
std::optional<std::filesystem::path> ensure_micro_support(const CompileCache& cache, const NvccSetup& base,
                                                          const CompileLimits& limits, std::vector<CompileStep>* steps);

// What an answer's link adds for the micro tier: the support library (named by its SONAME), and
// `$ORIGIN` on the run path, for the copy kagent places beside the answer's library.
std::vector<std::string> micro_link_flags(const std::filesystem::path& support);

}  // namespace kagent
