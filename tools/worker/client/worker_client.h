// The orchestrator's handle on one worker process (one GPU). It never touches CUDA:
// it starts kagent-worker, speaks JSON lines with it, watches it with a timeout, turns
// its death into a classified EvalResult and starts a fresh one on the next call.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fd.h"
#include "common/json_lines.h"
#include "common/subprocess.h"
#include "problem/problem_spec.h"
#include "result/device_info.h"
#include "result/eval_result.h"
#include "worker/protocol/eval_options.h"
#include "result/isolation.h"
#include "worker/client/gpu_admission.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/client/gpu_watch.h"
#include "worker/client/lock_holders.h"
#include "worker/client/phase_watch.h"
#include "worker/protocol/protocol.h"
#include "sandbox/sandbox_policy.h"

namespace kagent {

struct WorkerOptions {
  std::string worker_path;                  // kagent-worker; default: next to the running binary
  std::string log_path;                     // the worker's stdout/stderr; default: an unnamed temp file
  std::optional<int> gpu;                   // CUDA_VISIBLE_DEVICES for the worker
  std::chrono::milliseconds start_timeout{120'000};
  std::chrono::milliseconds request_timeout{180'000};  // per evaluation; the watchdog
  std::chrono::milliseconds kernelbench_build_allowance{300'000};  // added for load_inline builds
  // Each phase of an evaluation held to its budgets (phase_watch.h): past one, the worker is
  // killed and the verdict is timeout, phase_budget. The request_timeout above still bounds all.
  PhaseBudgets phase_budgets = PhaseBudgets::defaults();
  std::vector<std::string> env;             // extra KEY=VALUE for the worker
  // Where this boot's CUDA probe answer is kept between processes (sandbox/cuda_probe_memo.h);
  // empty: every client's first worker probes.
  std::string cuda_probe_memo;
  // The folder of the bytecode the worker's Python reads (python_bytecode.h), written by this
  // process before the first worker starts; empty: none (Python's own places).
  std::string pycache;
  // The worker's sandbox; default: from this process's environment (KAGENT_SANDBOX*). Each
  // worker gets a fresh scratch folder (under policy.scratch when set), removed when it stops.
  std::optional<sandbox::SandboxPolicy> sandbox;
  std::chrono::milliseconds memory_poll{100};  // how often the memory watchdog reads the worker's memory
  // How often NVML is asked who else uses the GPU during a timed request (0: never).
  std::chrono::milliseconds contention_poll{250};
  // Requests that put a problem on the GPU queue for its memory with every other kagent process
  // on the machine (gpu_admission.h); the ledger's folder (empty: default_admission_folder()).
  bool admission = true;
  std::string admission_folder;
  // The GPU's timing lock (worker/protocol/gpu_timing_lock.h), a file beside the ledger that
  // this client creates: the worker takes it shared for its GPU work and exclusively for what it
  // times, so that several workers per GPU overlap everything but their timings. The watchdog's
  // clock stops while the worker waits for it (a sibling's timing is not this candidate's), up
  // to `lock_wait_limit` per request, and no longer than the holder may hold it (below).
  bool timing_lock = true;
  std::chrono::milliseconds lock_wait_limit{1'800'000};
  // While it waits, the client looks at who holds the lock (lock_holders.h): a wait ends once one
  // holder has held it this long, longer than any request may run (0: start_timeout +
  // request_timeout + kernelbench_build_allowance, what a sibling's own client allows it); a lock
  // kept by processes a worker forked after the worker that took it exited is taken from them.
  std::chrono::milliseconds lock_holder_limit{0};
  // Told every change of the worker's hold on the timing lock, on the requesting thread: the mode
  // held, or with `waiting` the mode it waits for (holding nothing meanwhile); None when the worker
  // stops. The pool's GpuLockUsage (evaluation/gpu_lock_usage.h).
  std::function<void(LockMode mode, bool waiting)> lock_observer;
  // Where the client says what the user should know (waiting for GPU memory, a candidate
  // charged after the fact); default: a "kagent: ..." line on stderr.
  std::function<void(const std::string&)> notice;
};

// A request the worker answered with an error (problem failed to load, bad request).
struct WorkerError {
  std::string kind;      // e.g. problem_load_error, problem_incomplete, file_not_found, worker_start
  std::string message;
};

class WorkerClient {
 public:
  explicit WorkerClient(WorkerOptions opts);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // The worker's device description; starts the worker when none runs.
  std::variant<DeviceInfo, WorkerError> hello();
  std::variant<ProblemSpec, WorkerError> load_problem(const std::string& path);
  // Loads the problem and runs its reference once (while a candidate compiles). Best effort:
  // whatever fails here, the evaluation reports.
  void prepare(const std::string& path, bool compile_warm = false);
  // The problem's eager and torch.compile baseline times, measured (or read from the cache) by
  // the worker as an evaluation would and cached here; nullopt when the worker cannot (no GPU,
  // a problem that fails).
  std::optional<Timing> baselines(const std::string& problem_path, const EvalOptions& options);
  // Always returns a result: a crash, hang or broken protocol becomes a classified one.
  // `label` names the candidate in notes about it (default: its file).
  //
  // One candidate never changes another's verdict:
  //  - a problem_error or internal_error (reference_failed, evaluator_oom, ...) in a worker that
  //    ran candidates before is tried once more on a fresh worker; when that passes, the
  //    candidate before is charged (take_charges) and the result says so (isolation.retry);
  //  - an out-of-memory failure while another process used the GPU is tried once more with the
  //    GPU to itself;
  //  - a KernelBench answer whose load_inline extensions this worker loaded before goes to a
  //    fresh worker (they keep their static state in the process; native candidates get a
  //    fresh instance of their library in the worker itself, worker/service/library_instances.h).
  // `trusted_eager_ms`: EvaluateRequest's.
  EvalResult evaluate(const std::string& problem_path, const CandidateRef& candidate, const EvalOptions& options = {},
                      const std::string& label = {}, std::optional<double> trusted_eager_ms = std::nullopt);
  // The problem's footprint (inputs + parameters + outputs), for its requests' GPU memory.
  void set_footprint(const std::string& problem_path, int64_t bytes) { footprints_[problem_path] = bytes; }
  // The candidates blamed since the last call (their verdicts were delivered already).
  std::vector<WorkerCharge> take_charges() { return std::exchange(charges_, {}); }

  int restarts() const { return restarts_; }
  // The running (or last) worker's sandbox report (see tools/sandbox/apply_sandbox.h), with
  // "memory_watchdog" added: the host memory limit this client enforces.
  const nlohmann::json& sandbox() const { return sandbox_; }
  const std::string& log_path() const { return opts_.log_path; }
  // Seconds the first worker's start took ("worker_start", from the spawn to the hello, with the
  // worker's own steps under "steps"; "bytecode" before it, python_bytecode.h), and its first
  // "problem_load" and "prepare": what a cold `kagent eval` spends besides the compile and the
  // evaluation.
  const nlohmann::json& startup() const { return startup_; }

 private:
  struct Reply {
    enum class Kind { Ok, Error, Timeout, Died, MemoryLimit } kind;
    nlohmann::json body;
    std::string detail;            // for Died: how it ended; for MemoryLimit: how much it held;
                                   // for Timeout: set when the GPU's timing lock was not had in time
    std::optional<ExitInfo> exit = {};  // for Died, when known
    // Lines with this request's id but not its nonce: written by candidate code in the worker
    // (it shares the reply pipe), never by the worker. Skipped; the first one is kept here.
    std::string forged = {};
    std::optional<PhaseOverrun> overrun = {};  // for Timeout: a phase ran past its budget
  };
  std::optional<WorkerError> ensure_started();
  std::optional<WorkerError> start_once();
  std::string lock_folder() const;
  // Who holds the GPU's timing lock while the worker waits for it (lock files `paths`).
  LockWatch lock_watch(std::vector<std::string> paths) const;
  // `contention`, when given, looks at the GPU while the worker works; `phases`, when given,
  // holds each phase the worker announces to its budgets.
  template <class Request>
  Reply request(const Request& req, std::chrono::milliseconds timeout, ContentionRecorder* contention = nullptr,
                const PhaseBudgets* phases = nullptr);
  std::set<pid_t> own_processes() const;  // the worker's tree, which NVML must not count as others'
  EvalResult evaluate_once(const std::string& problem_path, const CandidateRef& candidate, const EvalOptions& options,
                           bool exclusive, std::optional<double> trusted_eager_ms);
  // A ticket for the GPU memory of a request about `problem_path` (none without a GPU or a ledger).
  std::optional<GpuAdmission::Ticket> admit(const std::string& what, const std::string& problem_path, bool exclusive);
  void notice(const std::string& message) const;
  void stop();
  std::string log_tail(size_t bytes = 2000) const;

  WorkerOptions opts_;
  std::unique_ptr<Subprocess> proc_;
  std::unique_ptr<JsonLineReader> reader_;
  DeviceInfo device_;
  std::unique_ptr<GpuWatch> gpu_watch_;  // opened once the first worker named its GPU
  std::string timing_lock_;              // the lock file the running worker takes (its hello); empty: none
  double lock_waited_ = 0;               // seconds the last request waited for the timing lock
  bool gpu_watch_tried_ = false;
  int next_id_ = 1;
  int restarts_ = -1;  // the first start is not a restart
  std::optional<sandbox::SandboxPolicy> policy_;  // resolved at the first start
  bool cuda_checked_ = false;  // a worker of this policy found the GPU: replacements skip the probe
  nlohmann::json cuda_fallback_;
  std::optional<bool> bytecode_ready_;  // ensure_worker_bytecode's answer, once asked
  std::string probe_key_;  // cuda_probe_key of the policy before any layer was left out
  std::optional<sandbox::SandboxPolicy> policy_before_memo_;  // set while a memo's answer is in force  // the first worker's probe result, when it left layers out
  std::string scratch_;                          // the running worker's scratch folder
  nlohmann::json sandbox_;
  nlohmann::json startup_ = nlohmann::json::object();
  bool own_log_ = false;  // a named temporary log, removed at the end (where no unnamed one could be made)
  // The default log, unnamed (O_TMPFILE; log_path names it /proc/self/fd/N): a kagent killed by
  // SIGKILL leaves no file of its workers' output in the temporary folder, as it leaves no worker.
  Fd log_fd_;
  // Isolation (see evaluate).
  std::unique_ptr<GpuAdmission> admission_;
  std::map<std::string, int64_t> footprints_;
  int candidates_in_worker_ = 0;          // evaluations the running worker answered
  std::deque<std::string> nonces_;        // the last ones the running worker was sent: its replies carry one
  std::set<std::string> answers_in_worker_;  // KernelBench answers (content hashes) whose extensions it loaded
  std::string last_label_, last_problem_;  // the last candidate it ran
  bool last_shared_ = false;               // the last request saw another process on the GPU
  std::vector<WorkerCharge> charges_;
};

// A CUDA fault (runtime_error cuda_fatal) in an evaluation that shared the GPU with other
// processes. It need not be this candidate's: on an H200, another worker's out-of-bounds kernel
// (l2_p44_gpt4o) and a clean one timed beside it (l2_p16_gpto1) failed at the same moment, each
// correct alone. The client tries it again on a fresh worker with the GPU to itself.
bool cuda_fault(const EvalResult& r);
bool fault_beside_others(const EvalResult& r, bool shared);

// Finds kagent-worker: $KAGENT_WORKER, next to /proc/self/exe, or the build directory.
std::string default_worker_path();

}  // namespace kagent
