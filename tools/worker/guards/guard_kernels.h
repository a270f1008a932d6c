// Guards no_kernel and library_share, judged on the CUPTI kernel records of one traced call of
// the candidate: its own kernels must run (a decoy kernel that is defined but never launched
// while ATen computes the result does not count), and they must do the bulk of the GPU work
// (cuBLAS doing the GEMM next to an own epilogue kernel is PyTorch's speed, not the candidate's).
// "Library" means a kernel a known library pattern claims (profiler/kernel_attribution.h);
// a kernel neither listed as the candidate's nor claimed by a library counts for the candidate,
// so a name that fails to match the ptxas list can never make a correct kernel look like cheating.
#pragma once

#include <optional>
#include <vector>

#include "profiler/kernel_activity.h"
#include "profiler/kernel_attribution.h"
#include "result/eval_result.h"
#include "worker/protocol/guard_options.h"

namespace kagent::worker {

// The candidate's own kernels' share of the call's GPU time (0 when only library kernels ran,
// and when none ran at all).
std::optional<double> own_kernel_share(const std::vector<profiler::KernelRecord>& records,
                                       const profiler::Attribution& attribution);

std::optional<GuardFinding> check_no_kernel(const std::vector<profiler::KernelRecord>& records,
                                            const profiler::Attribution& attribution);

std::optional<GuardFinding> check_library_share(const std::vector<profiler::KernelRecord>& records,
                                                const profiler::Attribution& attribution, const GuardOptions& opts);

// Whether a share measured beside other workers' kernels (a shared hold of the GPU) is near
// enough to library_share's bound to be traced again with the GPU alone: within
// kLibraryShareRecheckMargin of it. A sibling's kernels lengthen the candidate's and the
// library's kernels unevenly; on the H200 two answers' verdicts flipped between runs (own share
// 0.35 and 0.14 at the set's sizes, about 0.5 at KernelBench's official sizes).
inline constexpr double kLibraryShareRecheckMargin = 0.2;
bool library_share_needs_recheck(std::optional<double> own_share, const GuardOptions& opts);

// Both guards as flags when CUPTI could not trace (e.g. another profiler holds it): the
// verdict stands, a person is told the check did not happen.
std::vector<GuardFinding> kernel_guards_unavailable(const std::string& why, const GuardOptions& opts);

}  // namespace kagent::worker
