// Hardware metrics per kernel through CUPTI's Range Profiler and the profiler host API (CUDA
// 13 removed the event/metric APIs). The second profile phase, kept apart from activity
// tracing and from timing: counters serialise kernels and the first use costs setup time.
//
// Never throws for "counters not available here" (no privileges, virtualised GPU, gVisor,
// MIG, ...): the result says so with CUPTI's reason and the activity data stays useful.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kagent::profiler {

// Metric names the profile builder reads.
namespace metric {
inline constexpr const char* kDuration = "gpu__time_duration.sum";                                // ns
inline constexpr const char* kDramRead = "dram__bytes_read.sum";                                  // bytes
inline constexpr const char* kDramWrite = "dram__bytes_write.sum";                                // bytes
inline constexpr const char* kDramPct = "dram__throughput.avg.pct_of_peak_sustained_elapsed";     // %
inline constexpr const char* kWarpsActive = "sm__warps_active.avg.pct_of_peak_sustained_active";  // achieved occupancy %
inline constexpr const char* kIssueActive = "smsp__issue_active.avg.pct_of_peak_sustained_active";  // %
inline constexpr const char* kIpc = "sm__inst_executed.avg.per_cycle_active";                     // inst per cycle per SM
inline constexpr const char* kL1Hit = "l1tex__t_sector_hit_rate.pct";                             // %
inline constexpr const char* kTensorPct = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";  // %
inline constexpr const char* kSmPct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";         // compute SOL %
// Floating-point instructions executed (thread-level, predicated on), the counters of Nsight
// Compute's roofline: FLOPs = add + mul + 2 * fma per precision. Tensor-core work is not in them.
inline constexpr const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr const char* kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr const char* kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr const char* kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr const char* kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr const char* kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr const char* kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr const char* kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
// The roofline's peaks as Nsight Compute computes them: per-cycle peaks times the clocks of the run.
inline constexpr const char* kFfmaPeak = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained";  // per cycle
inline constexpr const char* kDfmaPeak = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained";  // per cycle
inline constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";                      // Hz
inline constexpr const char* kDramPeak = "dram__bytes.sum.peak_sustained";                        // bytes per cycle
inline constexpr const char* kDramClock = "dram__cycles_elapsed.avg.per_second";                  // Hz
}  // namespace metric

// The default set, most important first: metrics are dropped from the end until the set fits
// the pass budget. The speed-of-light metrics fit one pass on sm_90; the FLOP counters and the
// roofline's peaks need a second (sm__throughput, last, needs nine and is dropped there). An entry "a|b" means the first of a, b this chip knows (older or
// newer chips name the tensor pipe differently); the result reports the name collected.
std::vector<std::string> default_metrics();

struct RangeProfilerOptions {
  std::vector<std::string> metrics = default_metrics();
  size_t max_passes = 2;   // each extra pass is one more call of the candidate (about 1 ms plus an L2 flush)
  size_t max_ranges = 256; // kernel launches per call with counters; later launches get none
  // Size the counter data image to the launches the caller expects (profile()'s hint), twice
  // that rounded up to a power of two, at least 16, at most max_ranges. Emptying a kept image
  // for the next call copies it: 4 ms at 256 ranges (813 KB), 0.3 ms at 16 on an H200 (CUPTI's
  // Start and Stop, 8 and 7 ms, do not depend on it). A call that launches more than the hint
  // (it fills the image) is profiled again with room for max_ranges.
  bool size_to_launches = true;
  // Calls expected to launch more kernels than this get one range over the whole call
  // (CUPTI_UserRange) instead of one per launch (CUPTI_AutoRange); 0: always one per launch.
  // With an SM-level metric in the set (warps or issue active, IPC, L1 hit, tensor pipe: the
  // worker's speed of light) every auto range costs about 1 ms on an H200, on top of the 15 ms
  // that any counter costs per profile (Start 8, Stop 7); DRAM bytes and gpu__time_duration alone
  // cost 0.05 ms per range (`profiler_probe --range-cost`, bench/profiler/RESULTS.md). So 24
  // launches per kernel made a 37-42 ms profile and one range over them 16 ms, and a quick answer's
  // evaluation is 0.24 s: more than 4 launches per kernel would put the profile past 10% of it.
  // Past the limit the trace still times every kernel; the counters are the call's totals. With
  // the worker's metrics CUPTI 13 also returned counters for only the first 32 of a call's 67
  // launches, no drop reported. A session configured for one mode refuses the other: a switch
  // starts a new session (about 0.2 s on an H200).
  size_t per_kernel_launches = 4;
  // Keep the range profiler session (and its counter data image) enabled between calls. The
  // first Start of a session costs about 0.3 s on an H200, the profiled call 1 ms: kept, the
  // profile phase adds 9% to an evaluation instead of 150%, and timed medians stay the same
  // within 0.2% (bench/profiler/RESULTS.md).
  bool keep_session = true;
};

// Why a profile has no counters where another process holds them: one set per GPU, and a worker
// keeps its session (RangeProfilerOptions::keep_session) for its lifetime.
inline constexpr const char* kCountersBusy =
    "another process holds this GPU's performance counters: where several kagent workers share a GPU, "
    "the first to profile keeps them (--workers-per-gpu 1 gives every evaluation counters)";

struct RangeProfileResult {
  bool available = false;
  std::string status;                 // "ok", "busy" (kCountersBusy), "not_permitted" (privileges, virtualisation,
                                      // sandbox), "unsupported", "error"
  std::string reason;                 // CUPTI's words when not available
  std::string chip;                   // e.g. "GH100"
  std::vector<std::string> metrics;   // collected
  std::vector<std::string> dropped;   // requested but left out, each with why: "name (2 passes)" / "name (unknown on this chip)"
  size_t passes = 0;
  size_t ranges_dropped = 0;          // launches beyond max_ranges as CUPTI counts them (it may not: an
                                      // image with `capacity` ranges filled may have dropped more)
  // One per kernel launch, in launch order, keyed by each entry's first name (metric:: constants)
  // even where the chip knew it by an alternative.
  std::vector<std::map<std::string, double>> ranges;
  std::string scope = "kernel";       // "kernel": one range per launch; "call": one range over the whole call
                                      // (RangeProfilerOptions::per_kernel_launches)
  size_t capacity = 0;                // ranges the counter data image had room for
  size_t image_bytes = 0;             // its size
  double seconds = 0;                 // wall time of this phase, setup included
  std::map<std::string, double> step_seconds;  // of which: setup, session, config, flush, start, call, stop, decode, evaluate
};

// Runs `run_once` (one call of the candidate; it must synchronise or the profiler does) under
// the Range Profiler on the current device's context, once per pass, with `before_pass` (e.g.
// an L2 flush) run before each pass outside the profiled window.
//
// Ranges: CUPTI_AutoRange, one range per kernel launch, so counters are per kernel and map
// onto the activity trace by launch order; above options.per_kernel_launches expected launches,
// CUPTI_UserRange, one range pushed around the whole call (the result's scope says which). Replay: CUPTI_UserReplay, the candidate is simply
// called again for every pass. Kernel replay would save and restore every buffer a kernel
// touches for each pass (costly for large tensors, pointless with one pass); application
// replay needs a new process. A candidate call is repeatable: the checker already ran it many
// times with the same inputs.
//
// cuptiProfilerInitialize and the host side (chip, counter availability, chosen metrics, config
// image, host object) happen on the first profile() and are kept for later ones on the same
// device and context; so is the session (cuptiRangeProfilerEnable) unless options.keep_session
// is off, in which case it lives only within one profile() call.
//
// CUPTI failures come back in the result; exceptions from run_once (a broken candidate) pass
// through after the profiler is torn down.
class RangeProfiler {
 public:
  explicit RangeProfiler(RangeProfilerOptions options = {});
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // `expected_launches`: the kernel launches one call makes (e.g. from its activity trace), 0
  // when unknown; with options.size_to_launches it sizes the counter data image.
  RangeProfileResult profile(const std::function<void()>& run_once, const std::function<void()>& before_pass,
                             size_t expected_launches = 0);

  struct Setup;

 private:
  // `whole_call`: one user range around the call (capacity 1) instead of one range per launch.
  void run(const std::function<void()>& run_once, const std::function<void()>& before_pass, size_t capacity,
           bool whole_call, RangeProfileResult& res);
  RangeProfileResult profile_once(const std::function<void()>& run_once, const std::function<void()>& before_pass,
                                  size_t capacity, bool whole_call);
  size_t capacity_for(size_t expected_launches) const;

  RangeProfilerOptions options_;
  std::unique_ptr<Setup> setup_;
};

// One-off: RangeProfiler(options).profile(run_once, before_pass), its session ended on return.
// CUPTI allows one range profiler session per context: while a RangeProfiler keeps its
// session, another one on the same context fails (status "error", with CUPTI's words).
RangeProfileResult profile_ranges(const std::function<void()>& run_once, const std::function<void()>& before_pass,
                                  const RangeProfilerOptions& options = {}, size_t expected_launches = 0);

}  // namespace kagent::profiler
