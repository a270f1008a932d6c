// Which traced kernels are the candidate's own and which belong to a library (ATen, cuBLAS,
// cuDNN, CUTLASS, Triton, CUB/Thrust, ...), and the GPU-time share of each side. The reward-hack
// guard "own kernels under a floor share" and the profile's own_share read this. Pure C++.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "profiler/kernel_activity.h"

namespace kagent::profiler {

// The library a kernel name belongs to ("aten", "cublas", "cudnn", "cutlass", "triton",
// "cub", "thrust", "cufft", "curand", "nccl", "flash_attention"), or "" when no known library
// pattern matches. Takes the demangled name (or the mangled one when it did not demangle).
std::string library_of(std::string_view name);

// True when `kernel` is one of `own_names` (the candidate's kernels, demangled, as ptxas
// named them): equal demangled or mangled name, or equal qualified name (no return type,
// no parameters), so "ns::kern(float*)" matches "void ns::kern<>(float*)"-style variants.
bool matches_own(const KernelRecord& kernel, const std::vector<std::string>& own_names);

struct KernelSourceInfo {
  bool own = false;
  std::string source;  // "own", a library_of() name, or "other" (neither listed nor a known library)
};

struct Attribution {
  std::vector<KernelSourceInfo> kernels;  // parallel to the records
  double total_ms = 0, own_ms = 0;  // summed kernel durations
  double library_ms = 0;            // everything not own: libraries and unlisted ("other") kernels
  double own_share = 0;                              // own_ms / total_ms; 0 without kernels
};

// Without own names, whose the kernels are that no library pattern claims: the candidate's (the
// kernelbench format, whose kernels are built inside the evaluation), or no one's, "unclaimed"
// (an answer with no code that could launch a kernel: worker/guards/own_code.h).
enum class Unclaimed { Own, NoOnes };

// With own_names given, a kernel is own exactly when it matches one of them; without, every
// kernel that no library pattern claims is own, unless `unclaimed` says they are no one's.
Attribution attribute_kernels(const std::vector<KernelRecord>& records, const std::vector<std::string>& own_names,
                              Unclaimed unclaimed = Unclaimed::Own);

}  // namespace kagent::profiler
