#include "worker/guards/guard_kernels.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "profiler/kernel_names.h"

namespace kagent::worker {

namespace {
bool is_library(const profiler::KernelSourceInfo& k) { return !k.own && k.source != "other"; }

struct Split {
  double candidate_ms = 0, library_ms = 0;
  bool any_candidate = false;
};

Split split(const std::vector<profiler::KernelRecord>& records, const profiler::Attribution& a) {
  Split s;
  for (size_t i = 0; i < records.size() && i < a.kernels.size(); ++i) {
    const bool lib = is_library(a.kernels[i]);
    (lib ? s.library_ms : s.candidate_ms) += records[i].duration_ms();
    s.any_candidate = s.any_candidate || !lib;
  }
  return s;
}

// "aten: at::native::vectorized_elementwise_kernel<...> (2x, 31.0 us)" for the heaviest
// non-own kernels, so the message says who did the work.
std::string top_library_kernels(const std::vector<profiler::KernelRecord>& records,
                                const profiler::Attribution& a, size_t count) {
  std::map<std::string, std::pair<int, double>> by_name;  // short name -> (calls, us)
  for (size_t i = 0; i < records.size() && i < a.kernels.size(); ++i) {
    if (!is_library(a.kernels[i])) continue;
    auto& e = by_name[a.kernels[i].source + ": " + profiler::short_kernel_name(records[i].name, 60)];
    e.first += 1;
    e.second += records[i].duration_ms() * 1e3;
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> sorted(by_name.begin(), by_name.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second.second > y.second.second; });
  std::string s;
  for (size_t i = 0; i < sorted.size() && i < count; ++i)
    s += fmt::format("{}{} ({}x, {:.1f} us)", i ? "; " : "", sorted[i].first, sorted[i].second.first,
                     sorted[i].second.second);
  return s;
}
}  // namespace

std::optional<double> own_kernel_share(const std::vector<profiler::KernelRecord>& records,
                                       const profiler::Attribution& attribution) {
  const Split s = split(records, attribution);
  const double total = s.candidate_ms + s.library_ms;
  if (total <= 0) return s.any_candidate ? std::optional<double>(1.0) : std::optional<double>(0.0);
  return s.candidate_ms / total;
}

std::optional<GuardFinding> check_no_kernel(const std::vector<profiler::KernelRecord>& records,
                                            const profiler::Attribution& attribution) {
  if (split(records, attribution).any_candidate) return std::nullopt;
  std::string msg = "forward launched no kernel of its own";
  msg += records.empty() ? " and no kernel at all" : "; the work ran in " + top_library_kernels(records, attribution, 3);
  return GuardFinding{guard::kNoKernel, kGuardReject, msg};
}

std::optional<GuardFinding> check_library_share(const std::vector<profiler::KernelRecord>& records,
                                                const profiler::Attribution& attribution, const GuardOptions& opts) {
  const Split s = split(records, attribution);
  const double total = s.candidate_ms + s.library_ms;
  if (total <= 0 || s.candidate_ms / total >= opts.library_share_min) return std::nullopt;
  if (s.library_ms * 1e3 < opts.library_min_us) return std::nullopt;  // overhead-sized helpers only
  return GuardFinding{
      guard::kLibraryShare, kGuardReject,
      fmt::format("own kernels took {:.0f}% of the GPU time ({:.1f} of {:.1f} us; at least {:.0f}% required); the rest: {}",
                  s.candidate_ms / total * 100, s.candidate_ms * 1e3, total * 1e3, opts.library_share_min * 100,
                  top_library_kernels(records, attribution, 3))};
}

bool library_share_needs_recheck(std::optional<double> own_share, const GuardOptions& opts) {
  return opts.on(guard::kLibraryShare) && own_share &&
         std::abs(*own_share - opts.library_share_min) <= kLibraryShareRecheckMargin;
}

std::vector<GuardFinding> kernel_guards_unavailable(const std::string& why, const GuardOptions& opts) {
  std::vector<GuardFinding> out;
  for (const char* name : {guard::kNoKernel, guard::kLibraryShare})
    if (opts.on(name)) out.push_back({name, kGuardFlag, "unavailable: " + why});
  return out;
}

}  // namespace kagent::worker
