// EvalResult: the verdict on one candidate, as the worker and compiler produce it and
// everything downstream (CLI report, feedback, trajectories, rewards) reads it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/device_info.h"
#include "result/isolation.h"
#include "result/speedup_rounds.h"

namespace kagent {

// The verdict. Order matters nowhere; names are the JSON strings.
enum class Status {
  Correct,       // compiled, every trial matched the reference
  Wrong,         // ran, but some output differs (values, shape, dtype, count)
  CompileError,  // nvcc or load_inline failed
  RuntimeError,  // an exception or CUDA error inside the candidate
  Timeout,       // the watchdog killed the worker
  Crash,         // the worker died (signal, abort, exit())
  Invalid,       // the candidate does not fit the problem (no forward, wrong signature)
  ProblemError,  // the problem itself could not be loaded
  InternalError, // kagent failed (worker could not start, protocol broken)
  Rejected,      // matched the reference, but a reward-hack guard caught a cheat; reason = the guard's name
};

std::string to_string(Status s);
Status status_from_string(const std::string& s);

// A finer reason, stable strings that scripts and exit codes key on.
namespace reason {
inline constexpr const char* kMissingForward = "missing_forward";
inline constexpr const char* kSignatureMismatch = "signature_mismatch";
inline constexpr const char* kOutputCount = "output_count";
inline constexpr const char* kShape = "shape_mismatch";
inline constexpr const char* kDtype = "dtype_mismatch";
inline constexpr const char* kValues = "value_mismatch";
inline constexpr const char* kNonFinite = "non_finite";
inline constexpr const char* kFileNotFound = "file_not_found";
inline constexpr const char* kProblemLoad = "problem_load_error";
inline constexpr const char* kProblemIncomplete = "problem_incomplete";
inline constexpr const char* kCudaFatal = "cuda_fatal";
inline constexpr const char* kNoGpu = "no_gpu";
// A property KAGENT_SANDBOX_REQUIRE names has no mechanism in the worker: refused before any
// candidate ran (sandbox/sandbox_section.h).
inline constexpr const char* kSandboxUnmet = "sandbox_unmet";
inline constexpr const char* kCandidateOom = "candidate_oom";    // the candidate ran out of GPU memory itself
inline constexpr const char* kEvaluatorError = "evaluator_error";  // a step of kagent's own failed (internal_error)
inline constexpr const char* kEvaluatorOom = "evaluator_oom";      // ... by running out of GPU memory
inline constexpr const char* kReferenceFailed = "reference_failed";  // the problem's reference failed (internal_error)
// The reference failed beside the candidate and ran alone (runtime_error): the candidate changed
// what it depends on (torch's default dtype or device, a patched function, ...).
inline constexpr const char* kReferenceBrokenByCandidate = "reference_broken_by_candidate";
inline constexpr const char* kLoadInlineOption = "load_inline_option";  // load_inline/load called with an option torch lacks (compile_error)
// A compiler process ran past one of its limits and was killed (CompileInfo::limit).
inline constexpr const char* kCompileTimeout = "compile_timeout";
inline constexpr const char* kCompileMemory = "compile_memory";
// A phase of the evaluation ran past its wall or GPU budget (worker/protocol/phase_budgets.h):
// timeout, the worker killed; the message names the phase, the budget and its flag.
inline constexpr const char* kPhaseBudget = "phase_budget";
}  // namespace reason

// The reason for a problem that failed to load, from the worker's error kind
// (file_not_found, problem_incomplete, problem_load_error).
const char* problem_error_reason(const std::string& kind);

struct KernelResources {  // ptxas -v, per kernel
  std::string kernel;     // demangled when possible
  int registers = 0;
  int64_t shared_static_bytes = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t constant_bytes = 0;
};

// What one kernel's machine code does, from `cuobjdump -sass -res-usage` (compiler/sass_summary.h).
// Static counts: instructions in the code, not how often they run. Widths are bits per thread
// ("8", "16", "32", "64", "128", "256"); a vectorised load is one of 64 bits or more.
struct SassKernel {
  std::string kernel;       // demangled when possible
  std::string mangled;
  int registers = 0;
  int64_t shared_bytes = 0; // static shared memory
  int64_t local_bytes = 0;  // local memory per thread (spills, local arrays)
  int64_t stack_bytes = 0;
  int instructions = 0;     // NOPs left out
  std::map<std::string, int> global_loads, global_stores, shared_loads, shared_stores;  // width -> count
  int ldmatrix = 0;         // LDSM: shared -> registers in tensor-core fragment layout
  int async_copies = 0;     // LDGSTS (cp.async) and UTMALDG (TMA): global -> shared without registers
  int atomics = 0;          // ATOM, ATOMG, ATOMS, RED
  int local_loads = 0, local_stores = 0;
  int local_in_loops = 0;   // LDL/STL inside a loop (a backward branch's range): spills in the hot loop
  int ffma = 0, fmul = 0, fadd = 0;         // FP32
  int fp64 = 0;             // DFMA, DMUL, DADD
  int fp16 = 0;             // HFMA2, HMUL2, HADD2 (two lanes each)
  std::map<std::string, int> tensor;        // HMMA/IMMA/DMMA/HGMMA/... with shape and types -> count
  int branches = 0;         // BRA, BRX, JMP, JMX, CALL, RET (the end-of-code self loop left out)
  int loops = 0;            // backward branches
  int barriers = 0;         // BAR (__syncthreads and named barriers), SYNCS (mbarriers)

  int tensor_instructions() const;
  int vector_global_accesses() const;  // global loads and stores of 64 bits or more
  int scalar_global_accesses() const;  // of 32 bits or fewer
};

// The candidate's SASS: where it is stored (gzip text) and its per-kernel summary, or why
// there is none. Library kernels are not in it: only the candidate's own object is read.
struct SassInfo {
  bool available = false;
  std::string missing_reason;  // why not, when !available ("cuobjdump: ... does not contain device code")
  std::string file;            // the gzip file: in the compile cache, or relative to the run folder
  std::string arch;            // "sm_90a"
  std::vector<SassKernel> kernels;
};

// One compiler process of a compile (nvcc's steps where kagent runs them itself: "cuda.cu
// cudafe++", "main.cpp g++", "link", a precompiled header's build, ...), in the order they ended.
struct CompileStep {
  std::string name;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system, the process and everything it started
};

struct CompileInfo {
  bool ok = false;
  bool cache_hit = false;
  double seconds = 0;          // wall time of nvcc (0 on a cache hit)
  std::string errors;          // short: first errors, deduplicated, with source lines
  std::string log;             // full compiler output, cut to a stated limit
  std::string command;         // the nvcc command line
  std::string artifact;        // path of the shared object
  std::string op_name;         // dispatcher name of the bound forward, e.g. "kagent_3fa9c2d1e0b4a7c6::forward"
  std::string reason;          // reason::kMissingForward / kSignatureMismatch when that is what failed
  std::string limit;           // reason::kCompileTimeout / kCompileMemory when a limit killed the compile
  long peak_rss_mb = 0;        // largest resident set of any compiler process (0 on a cache hit)
  std::vector<KernelResources> resources;
  std::optional<SassInfo> sass;  // absent where nothing was disassembled (failed compile, kernelbench, old record)
  std::vector<CompileStep> steps;  // where the seconds went (empty on a cache hit and in old records)
};

struct Mismatch {
  std::vector<int64_t> index;
  double got = 0;
  double expected = 0;
};

struct OutputCheck {           // one output of one trial
  int output = 0;
  bool ok = true;
  std::string reason;          // empty when ok, else a reason:: string
  std::string message;         // human text, e.g. "shape [4, 8] != expected [4, 16]"
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::vector<int64_t> worst_index;
  int64_t mismatched = 0;      // elements outside tolerance
  int64_t numel = 0;
  double atol = 0, rtol = 0;
  std::vector<Mismatch> samples;  // a few mismatching positions
};

struct Correctness {
  int trials = 0;
  int trials_passed = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::optional<OutputCheck> first_failure;  // with trial number below
  int first_failure_trial = -1;
  std::string first_failure_run;  // "before reference" or "after reference"
};

struct TimingStats {
  double median_ms = 0, mean_ms = 0, stdev_ms = 0, min_ms = 0, max_ms = 0;
  double rel_stdev = 0;        // stdev / mean
  int iterations = 0;
  double total_s = 0;          // GPU time spent in the measured region
  std::string stop_reason;     // which stopping criterion ended the loop
  double host_median_ms = 0;   // wall time to device-wide completion, a cross-check
  double issue_median_ms = 0;  // host time to issue one call (its Python, its launches)
  // "hidden": the stream was held until the call was issued, a sample being the GPU's time or
  // the issue time, whichever is longer; "included": launch latency is in every sample (the
  // setting, or no hold possible); "included after N samples": the call waited for the GPU.
  std::string launch_latency;
  int64_t preemptions = -1;    // times the timing thread lost its core during the loop (-1: unknown)
};

// Whether the GPU was kagent's alone while it timed: other processes seen on it through NVML
// (asked by the orchestrator before, during and after the request) and the SM clock. Timings
// taken on a shared GPU are reported with a warning and never enter the baseline cache.
// With the GPU's timing lock (worker/protocol/gpu_timing_lock.h) the GPU is looked at only while
// the worker holds it exclusively, and the sibling workers that take part in it (they have the
// lock file open) are left out: they cannot run on the GPU until it is let go.
struct GpuContention {
  bool known = false;                // NVML answered (false: no driver library, no such GPU)
  bool shared = false;               // another process used the GPU during the measurement
  std::vector<std::string> others;   // "pid 4242 (python3)", as NVML and /proc name them
  std::optional<int> sm_clock_mhz_before, sm_clock_mhz_after;
  bool timing_lock = false;          // timed with the GPU's timing lock held exclusively
  std::vector<std::string> siblings; // workers seen on the GPU that waited on the lock meanwhile (not others)
};

// A cached eager baseline is not trusted blindly: each evaluation that reads it times eager
// again briefly (a few cold samples). More than `kBaselineRecheckTolerance` apart, the entry
// is measured again in full and replaced.
struct BaselineRecheck {
  double cached_ms = 0, measured_ms = 0;
  bool replaced = false;
};
inline constexpr double kBaselineRecheckTolerance = 0.10;

struct Timing {
  std::optional<TimingStats> candidate, eager, compiled;
  std::optional<double> speedup_eager, speedup_compiled;  // baseline / candidate
  // Eager and the candidate again in paired rounds (--speedup-rounds; a candidate under 1 ms):
  // the speedup's interval. Absent where none ran.
  std::optional<SpeedupRounds> rounds;
  bool baseline_cache_hit = false;
  std::optional<BaselineRecheck> baseline_recheck;  // absent where no cached baseline was read
  std::optional<GpuContention> contention;  // absent where it was not asked (no GPU, an old record)
};

// The speedup over eager that `estimate` reads: the rounds' geometric mean or low end where rounds ran,
// else speedup_eager.
std::optional<double> eager_speedup(const Timing& t, SpeedupEstimate estimate);

// What one reward-hack guard found (tools/worker/guard_*.h). "reject" turns the verdict into
// Status::Rejected; "flag" (e.g. an excessive speedup, a guard that could not run) keeps the
// verdict and asks for a human look.
struct GuardFinding {
  std::string name;     // the guard: no_kernel, library_share, leftover_memory, ...
  std::string action;   // "reject" | "flag": the guard's own, which is the strict policy's
  std::string message;  // what it saw, with the numbers
  // The action under the kernelbench policy where the guard judged it itself (precision_lowered:
  // "flag" when the output is within the tolerance of the float64 truth); empty: the policy
  // table decides (result/policy.h). Written out resolved, as "kernelbench_action".
  std::string kernelbench_action = "";
};

inline constexpr const char* kGuardReject = "reject";
inline constexpr const char* kGuardFlag = "flag";

// One named phase of an evaluation (tools/worker/service/evaluation.h lists them in order):
// its wall time, the peak GPU memory torch's allocator held during it, and whose failure
// ended it, when one did: the candidate's or the evaluator's own.
struct PhaseRecord {
  std::string name;
  double seconds = 0;
  int64_t peak_gpu_bytes = 0;  // 0 where no GPU memory was measured
  std::string failure;         // "" | kFailureCandidate | kFailureEvaluator | kFailureProblem
  std::vector<std::pair<std::string, double>> parts = {};  // seconds of its steps, where it records them (the guard run)
};
inline constexpr const char* kFailureCandidate = "candidate";  // its verdict (wrong, rejected, runtime_error, ...)
inline constexpr const char* kFailureEvaluator = "evaluator";  // kagent's own step: internal_error
inline constexpr const char* kFailureProblem = "problem";      // the problem file: problem_error

// One load_inline/load call of a KernelBench answer, as it ran in the worker: kagent's
// precompiled library (nvcc before the worker was ready), or torch's own build, and why.
struct ExtensionBuild {
  std::string name;
  std::string built_by;  // "kagent" | "torch" | "nobody" (torch's build would fail: its error raised at once)
  std::string reason;    // built_by torch: why kagent did not build it; nobody: why torch's build fails
  double seconds = 0;    // the call's time in the worker (loading kagent's library, or torch's whole build)
};
inline constexpr const char* kBuiltByKagent = "kagent";
inline constexpr const char* kBuiltByTorch = "torch";
inline constexpr const char* kBuiltByNobody = "nobody";

// The verdict under one policy (result/policy.h).
struct PolicyVerdict {
  Status status = Status::InternalError;
  std::string reason;
  std::string message;
};

struct EvalResult {
  Status status = Status::InternalError;  // under `policy`: verdicts[policy] where verdicts were set
  std::string reason;          // reason:: string, may be empty
  std::string message;         // one human line
  std::string runtime_error;   // exception text / CUDA error, cut
  std::string format;          // "cuda" | "kernelbench"
  std::optional<CompileInfo> compile;
  std::optional<Correctness> correctness;
  std::optional<Timing> timing;
  DeviceInfo device;           // the worker's GPU
  nlohmann::json profile;      // filled by the profile phase; null when absent
  std::vector<GuardFinding> guards;  // reward-hack guard findings, in the order the guards ran
  std::string policy;          // the policy status, reason and message follow ("" in records before policies)
  std::map<std::string, PolicyVerdict> verdicts;  // "kernelbench", "strict": both, whichever rules
  // The candidate's own kernels' share of the GPU time of the guards' traced call (CUPTI):
  // 1 where it did all the work, 0 where libraries did; absent where no call was traced.
  std::optional<double> own_kernel_share;
  std::vector<PhaseRecord> phases;  // in the order they ran
  std::vector<ExtensionBuild> extensions;  // kernelbench: the answer's load_inline/load calls
  int64_t footprint_bytes = 0; // the problem's inputs + parameters + outputs: what peak memory is measured against
  double eval_seconds = 0;     // worker time for this evaluation (no compile)
  double total_seconds = 0;    // end to end, compile included
  // The first evaluation of a session with workers of its own (`kagent eval`, a solve's first
  // turn): the seconds before it (its worker's start, the problem's load and warm-up, the wait
  // for the compile); null elsewhere (worker_client.h's startup()).
  nlohmann::json startup;
  std::string worker_log_tail; // last lines the worker printed, on crashes
  Isolation isolation;         // left behind in the worker, a retry on a fresh one, a wait for GPU memory (isolation.h)
  // What held each sandbox property in the worker that ran the candidate, where writes were
  // redirected, what was refused (sandbox/sandbox_section.h); null: no candidate code ran.
  nlohmann::json sandbox;

  double guards_seconds() const;  // the guard phases' time (part of eval_seconds)
  const PhaseRecord* phase(const std::string& name) const;  // null when it did not run
};

void to_json(nlohmann::json& j, const KernelResources& r);
void from_json(const nlohmann::json& j, KernelResources& r);
void to_json(nlohmann::json& j, const SassKernel& k);
void from_json(const nlohmann::json& j, SassKernel& k);
void to_json(nlohmann::json& j, const SassInfo& s);
void from_json(const nlohmann::json& j, SassInfo& s);
void to_json(nlohmann::json& j, const CompileStep& s);
void from_json(const nlohmann::json& j, CompileStep& s);
void to_json(nlohmann::json& j, const CompileInfo& c);
void from_json(const nlohmann::json& j, CompileInfo& c);
void to_json(nlohmann::json& j, const Mismatch& m);
void from_json(const nlohmann::json& j, Mismatch& m);
void to_json(nlohmann::json& j, const OutputCheck& o);
void from_json(const nlohmann::json& j, OutputCheck& o);
void to_json(nlohmann::json& j, const Correctness& c);
void from_json(const nlohmann::json& j, Correctness& c);
void to_json(nlohmann::json& j, const TimingStats& t);
void from_json(const nlohmann::json& j, TimingStats& t);
void to_json(nlohmann::json& j, const GpuContention& c);
void from_json(const nlohmann::json& j, GpuContention& c);
void to_json(nlohmann::json& j, const BaselineRecheck& b);
void from_json(const nlohmann::json& j, BaselineRecheck& b);
void to_json(nlohmann::json& j, const Timing& t);
void from_json(const nlohmann::json& j, Timing& t);
void to_json(nlohmann::json& j, const GuardFinding& g);
void from_json(const nlohmann::json& j, GuardFinding& g);
void to_json(nlohmann::json& j, const PhaseRecord& p);
void from_json(const nlohmann::json& j, PhaseRecord& p);
void to_json(nlohmann::json& j, const ExtensionBuild& e);
void to_json(nlohmann::json& j, const PolicyVerdict& v);
void from_json(const nlohmann::json& j, PolicyVerdict& v);
void from_json(const nlohmann::json& j, ExtensionBuild& e);
// The `sandbox` section every result carries: `r.sandbox`, or, where no candidate code ran,
// {"candidate_ran": false, "why": ...} (sandbox_not_run).
nlohmann::json sandbox_json(const EvalResult& r);
nlohmann::json sandbox_not_run(std::string_view why);
void to_json(nlohmann::json& j, const EvalResult& r);
void from_json(const nlohmann::json& j, EvalResult& r);

}  // namespace kagent
