// EvaluationPool: what evaluating needs that outlives one problem, shared by every
// EvaluationSession of a process: long-lived workers, `workers_per_gpu` on each GPU (started
// once, in the background; the GPU's timing lock, worker/protocol/gpu_timing_lock.h, lets their
// loads, checks and guards overlap while each timing has the GPU to itself), the compile pool (nvcc over the CPU cores, a bounded queue) and the device
// the workers report. `kagent eval` and `kagent solve` give each session a pool of its own;
// `kagent collect` shares one pool among all the problems it runs at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/compile_pool.h"
#include "evaluation/baseline_memo.h"
#include "evaluation/draw_ahead.h"
#include "evaluation/gpu_lock_usage.h"
#include "result/device_info.h"
#include "worker/client/worker_client.h"
#include "worker/protocol/eval_options.h"

namespace kagent {

// Workers per GPU where throughput matters (collect, serve), unless told: one per 4 of the CPU
// cores each GPU's share comes to, at least 2 (one keeps the GPU busy while another loads a
// problem or checks a candidate on the CPU side; their timings take turns) and at most 4. On one
// GPU and 16 cores, 4: the 149 real answers went at 56.6 a minute against 52.0 with 3 and 33.5
// with 2 (H200, bench/realworld/RESULTS.md); more workers overlap more of the shared checks
// while the compiles keep the cores busy.
inline constexpr int kMinDefaultWorkersPerGpu = 2;
inline constexpr int kMaxDefaultWorkersPerGpu = 4;
int default_workers_per_gpu(int cpus, int gpus);

struct EvaluationSettings {
  std::string cache_dir;                  // empty: cache_root()
  std::string arch;                       // nvcc target; empty: the worker GPU's own
  std::vector<int> gpus;                  // workers_per_gpu workers each; empty: the default GPU
  int workers_per_gpu = 1;                // 0: default_workers_per_gpu over this process's cores and the
                                          // distinct GPUs (`kagent collect` and `serve` unless told)
  double timeout_s = 180;                 // per evaluation (the worker's watchdog)
  PhaseBudgets phase_budgets = PhaseBudgets::defaults();  // per phase of an evaluation, within timeout_s
  bool use_compile_cache = true;
  unsigned compile_jobs = 0;              // compiles at once; 0: one per CPU core for native candidates,
                                          // three per four cores for KernelBench answers (each runs 2-3 compilers)
  bool hide_gpus = false;                 // workers see no GPU: candidates are compiled and checked, never run
  bool prepare_inline_headers = false;    // build load_inline's per-machine precompiled headers once the
                                          // GPU's arch is known, beside the workers' start (KernelBench answers)
  EvalOptions options;                    // the worker's (trials, seed, tolerances, timing, guards, ...)
};

// One worker's share (one GPU's, in `kagent collect --gpus`).
struct WorkerCounters {
  int gpu = -1;                           // its CUDA device index; -1: the default one
  int64_t evaluations = 0;
  double eval_seconds = 0;                // inside evaluate requests
  double held_seconds = 0;                // leased for any request (loads and baselines too)
  double load_seconds = 0;                // inside load-problem requests (the file, its spec)
  double baselines_seconds = 0;           // inside baselines requests (a problem's, for its prompt)
  double idle_while_queued_seconds = 0;   // free while some request waited for a worker
  int restarts = 0;                       // fresh processes after the first (a candidate broke it, a limit)
};

// How one GPU's timing lock was held by this pool's workers (evaluation/gpu_lock_usage.h).
struct GpuLockCounters {
  int gpu = -1;                           // its CUDA device index; -1: the default one
  GpuLockTotals lock;
};

// What the pool has done so far (for progress and throughput).
struct PoolCounters {
  int64_t evaluations = 0;                // requests answered by a worker (evaluate): the workers' sum
  int64_t compiles = 0;                   // nvcc runs and cache hits (native candidates and KernelBench answers)
  int compiling = 0;                      // KernelBench answers compiling now
  int compile_waiting = 0;                // KernelBench answers waiting for a compile slot
  double worker_busy_seconds = 0;         // the workers' eval_seconds, summed
  std::vector<WorkerCounters> workers;    // per worker, in --gpus order
  std::vector<GpuLockCounters> gpu_locks; // per GPU, in --gpus order
  DrawAheadCounters draws;                // the trials' CPU draws made ahead (evaluation/draw_ahead.h)
};

class EvaluationPool {
 public:
  explicit EvaluationPool(EvaluationSettings settings);
  ~EvaluationPool();
  EvaluationPool(const EvaluationPool&) = delete;
  EvaluationPool& operator=(const EvaluationPool&) = delete;

  const EvaluationSettings& settings() const { return settings_; }
  const std::string& cache_dir() const { return cache_; }
  size_t size() const { return workers_.size(); }
  // The GPUs the workers run on (distinct), at least 1.
  size_t gpu_count() const { return gpu_count_; }
  // How many problem opens may hold a worker at once: with several workers per GPU, all but
  // one per GPU (evaluations always find a worker of their own); else every worker.
  size_t opening_workers() const;

  // Starts every worker (imports torch, initialises CUDA) in the background, then has each load
  // `warm_problem` and run its reference once (when given), so that nvcc's seconds are not
  // lost. Only the first call starts anything.
  void start(const std::string& warm_problem = {}, bool warm_compile = false);
  bool starting() const;
  // The GPU's description once every worker answered, or why one could not start. Waits.
  std::variant<DeviceInfo, WorkerError> started();
  DeviceInfo device();  // the same, an unavailable device when a worker could not start

  // The nvcc target: the workers' GPU's, or the one the last run saw while they start.
  std::string current_arch() const;
  std::string arch_for(const DeviceInfo& device) const;

  // How this pool compiles for `arch` (cache folder, cache use): for compiles it does not run
  // itself (a KernelBench answer's load_inline extensions).
  CompileOptions compile_options(const std::string& display_name, const std::string& arch) const;
  // Compiles on the compile pool (blocks while its queue is full, then until done). Throws what
  // compile_native throws (std::invalid_argument: a problem a native candidate cannot express).
  CompileInfo compile(const ProblemSpec& spec, const std::string& source, const std::string& display_name,
                      const std::string& arch);

  // One of the compile slots for work the caller compiles on its own thread (a KernelBench
  // answer's load_inline extensions): as many as the cores keep busy, so that compiles finish
  // one after another and keep the workers fed instead of all finishing late together.
  class CompileSlot {
   public:
    explicit CompileSlot(EvaluationPool& pool);  // waits for a free slot
    ~CompileSlot();
    CompileSlot(const CompileSlot&) = delete;
    CompileSlot& operator=(const CompileSlot&) = delete;

   private:
    EvaluationPool& pool_;
  };
  unsigned compile_slots() const { return compile_slots_; }
  // Workers held by a Lease now (a cluster node counts the jobs it holds beyond them:
  // serve/queue/node_room.h).
  size_t leased() const;
  // The cores the compilers run on (empty: any): this process's, less those kept for the workers.
  const std::vector<int>& compile_cpus() const { return compile_cpus_; }

  // A worker held for one request about `problem` (waits until one is handed over). Requests
  // are served in order of arrival, with one exception: a worker that frees up goes first to a
  // waiting request whose problem it already holds (loaded, reference run, the trials' CPU draws
  // made; a file of the same text under another name counts, problem_affinity_key), since another
  // worker would load and draw it again (seconds per KernelBench problem). A request passed over that
  // way kMaxPassedOver times is served next. Without such a match, the worker free longest
  // takes the oldest request, so that work spreads over every GPU; no worker stays free while
  // a request waits.
  class Lease {
   public:
    Lease(EvaluationPool& pool, const std::string& problem);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    WorkerClient& client();
    // Counts one evaluation of `seconds` on this worker.
    void count_evaluation(double seconds);
    // Counts a problem's load, or its baselines request, of `seconds` on this worker.
    void count_load(double seconds);
    void count_baselines(double seconds);

   private:
    EvaluationPool& pool_;
    std::string problem_;
    std::string affinity_;  // problem_affinity_key(problem_)
    size_t index_ = 0;
  };

  // The first worker, before start(): it loads a problem's spec while the others are not yet
  // asked for anything (a lone session's first request starts it).
  WorkerClient& first_worker_before_start();
  // The first worker's start-up seconds (WorkerClient::startup); read once started() returned.
  nlohmann::json first_worker_startup() const;

  // A problem's footprint (inputs + parameters + outputs): its requests take that much GPU
  // memory times kNeedPerFootprint from the GPU's ledger (worker/client/gpu_admission.h).
  void expect_footprint(const std::string& problem, int64_t bytes);
  // Candidates blamed after their verdicts were delivered (WorkerClient::take_charges), from
  // every worker, since the last call.
  std::vector<WorkerCharge> take_charges();

  PoolCounters counters() const;

  // The trials' draws made ahead of the workers (nullptr: off, no GPU, no trials).
  DrawAhead* draw_ahead() { return draws_.get(); }

  // The baselines this process measured, by problem (shared by every session on this pool).
  BaselineMemo& baseline_memo() { return baseline_memo_; }

  static constexpr int kMaxPassedOver = 4;

 private:
  struct Worker;
  struct Waiter;
  EvaluationSettings settings_;
  std::string cache_;
  // Declared before the workers, whose observers feed them: destroyed after them.
  std::vector<std::pair<int, std::unique_ptr<GpuLockUsage>>> lock_usage_;  // per GPU
  std::unique_ptr<DrawAhead> draws_;  // before the workers, which read its folder
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t gpu_count_ = 1;
  int workers_per_gpu_ = 1;
  std::unique_ptr<CompilePool> compiler_;
  std::filesystem::path device_file_;
  DeviceInfo guessed_device_;             // from the last run, before the workers answer
  std::once_flag start_once_;
  std::shared_future<std::optional<WorkerError>> started_;  // hello (+ prepare) of every worker
  std::future<void> headers_;  // prepare_inline_headers, started with the first worker's answer
  // Charges the time since the last change to the free workers while a request waits.
  void account_locked(std::chrono::steady_clock::time_point now);
  // Hands free workers to waiting requests (the rule above Lease).
  void assign_locked(std::chrono::steady_clock::time_point now);
  mutable std::mutex mu_;
  std::condition_variable assigned_;
  std::vector<Waiter*> queue_;            // requests blocked in Lease's constructor, oldest first
  std::chrono::steady_clock::time_point last_change_ = std::chrono::steady_clock::now();
  DeviceInfo device_;
  bool device_known_ = false;
  bool device_saved_ = false;
  int64_t compiles_ = 0;
  std::map<std::string, int64_t> footprints_;  // by problem path
  std::vector<WorkerCharge> charges_;
  unsigned compile_slots_ = 1;
  std::vector<int> compile_cpus_;
  int compiling_ = 0, compile_waiting_ = 0;
  std::condition_variable slot_freed_;
  BaselineMemo baseline_memo_;
};

}  // namespace kagent
