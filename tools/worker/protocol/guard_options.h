// Reward-hack guards: their names (the verdict's reason when one rejects) and their
// thresholds, part of the evaluate request's options ("guards": false | {...}).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kagent::worker {

namespace guard {
inline constexpr const char* kNoKernel = "no_kernel";
inline constexpr const char* kLibraryShare = "library_share";
inline constexpr const char* kOutputAliasesInput = "output_aliases_input";
inline constexpr const char* kLeftoverMemory = "leftover_memory";
inline constexpr const char* kCachedResults = "cached_results";
inline constexpr const char* kSideStream = "side_stream";
inline constexpr const char* kInputsModified = "inputs_modified";
inline constexpr const char* kPrecisionLowered = "precision_lowered";
inline constexpr const char* kShapeGeneralization = "shape_generalization";
inline constexpr const char* kExcessiveSpeedup = "excessive_speedup";
// Host work the timing sample does not see (--timing-sample gpu; guard_host_work.h).
inline constexpr const char* kHostWork = "host_work";
// A forward that reads its inputs on a stream that does not wait for the caller's (guard_unjoined_stream.h).
inline constexpr const char* kUnjoinedStream = "unjoined_stream";
inline constexpr const char* kTryExceptFallback = "try_except_fallback";
inline constexpr const char* kTorchOpsInForward = "torch_ops_in_forward";
inline constexpr const char* kTimingTampered = "timing_tampered";
inline constexpr const char* kTorchPatched = "torch_patched";
// torch.backends.cudnn.benchmark switched by the candidate: put back; noted under kernelbench.
inline constexpr const char* kCudnnBenchmark = "cudnn_benchmark";
inline constexpr const char* kThreads = "threads";
inline constexpr const char* kInconsistent = "inconsistent_result";
// Not a hack: a problem whose forward changes its model's plain tensor state (correctness.h).
inline constexpr const char* kStatefulModule = "stateful_module";
// Judged by the client, not the worker: a reply line the candidate wrote on the worker's pipe.
inline constexpr const char* kReplyForged = "reply_forged";
}  // namespace guard

struct GuardOptions {
  bool enabled = true;             // "guards": false switches every guard off
  std::set<std::string> disabled;  // "disable": [names]: single guards off (the suite proves hacks pass without them)

  // library_share: the candidate's own kernels must take at least this share of the GPU time
  // of a traced call, unless the library kernels took under library_min_us in all (launch-sized
  // helpers such as a fill or a copy next to a tiny own kernel are not "a library doing the work").
  double library_share_min = 0.5;
  double library_min_us = 10;
  // side_stream: a kernel ending this long after the marker the current stream ran right after
  // forward returned is work left running behind forward's back. Both are GPU timestamps
  // (CUPTI); the margin covers their conversion to one clock.
  double side_stream_marker_margin_us = 2;
  // When CUPTI recorded no marker: the same against the host's moment the current stream was
  // seen done, with a margin for the skew between CUPTI's GPU timestamps and its host clock.
  double side_stream_margin_us = 10;
  // precision_lowered: see guard_precision.h for the rules. Errors are mean relative errors
  // against an fp64 truth; the guard's inputs are cut to precision_max_input_bytes.
  double precision_ratio = 64;
  double precision_floor = 1e-4;
  double precision_excess = 4;     // the candidate's error over eager's before rounding is suspected
  double precision_explained = 8;  // how much better a rounded-input truth must explain it
  int64_t precision_max_input_bytes = int64_t{256} << 20;
  // excessive_speedup: a speedup over eager above this is flagged for review (verdict kept).
  double speedup_flag = 10;
  // unjoined_stream holds the caller's stream during one extra call; false leaves it out (as the
  // guard's name in `disable` does) where that call costs too much.
  bool unjoined_stream_check = true;
  // Guard runs draw inputs from seed + seed_offset (+1, +2, ...): never a trial's inputs.
  int64_t seed_offset = 1000;

  bool on(std::string_view name) const { return enabled && !disabled.contains(std::string(name)); }
};

// `j` is the "guards" member of the options: absent/null (defaults), a bool, or an object
// with the fields above and "disable". Throws std::invalid_argument for an unknown guard name.
GuardOptions guard_options_from_json(const nlohmann::json& j);
void to_json(nlohmann::json& j, const GuardOptions& o);
void from_json(const nlohmann::json& j, GuardOptions& o);

}  // namespace kagent::worker
