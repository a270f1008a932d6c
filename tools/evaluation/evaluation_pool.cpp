#include "evaluation/evaluation_pool.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <thread>

#include <fmt/format.h>

#include "common/cpu_affinity.h"
#include "worker/client/python_bytecode.h"
#include "worker/protocol/known_dram.h"
#include "common/files.h"
#include "common/paths.h"
#include "compiler/inline_extension_compiler.h"
#include "compiler/nvcc_command.h"
#include "evaluation/worker_choice.h"
#include "sandbox/cuda_probe.h"

namespace kagent {

namespace fs = std::filesystem;

struct EvaluationPool::Worker {
  explicit Worker(WorkerOptions o) : client(std::move(o)) {}
  WorkerClient client;
  bool busy = false;
  std::chrono::steady_clock::time_point changed_at = std::chrono::steady_clock::now();  // leased or freed
  WorkerCounters stats;
  // Problems asked about in an earlier request, by problem_affinity_key: loaded in the worker, unless
  // it restarted since.
  std::set<std::string> problems;
};

struct EvaluationPool::Waiter {
  const std::string& problem;  // problem_affinity_key
  std::optional<size_t> worker;  // set by assign_locked
  int passed_over = 0;
};

int default_workers_per_gpu(int cpus, int gpus) {
  return std::clamp(cpus / std::max(gpus, 1) / 4, kMinDefaultWorkersPerGpu, kMaxDefaultWorkersPerGpu);
}

EvaluationPool::EvaluationPool(EvaluationSettings settings) : settings_(std::move(settings)) {
  cache_ = settings_.cache_dir.empty() ? cache_root() : settings_.cache_dir;
  std::vector<std::optional<int>> gpus;
  for (int g : settings_.gpus) gpus.emplace_back(g);
  if (gpus.empty()) gpus.emplace_back(std::nullopt);
  gpu_count_ = std::set<std::optional<int>>(gpus.begin(), gpus.end()).size();
  const auto cpus = static_cast<int>(usable_cpu_count());
  // Without a GPU a second worker would only answer no_gpu twice as fast.
  workers_per_gpu_ = settings_.hide_gpus            ? 1
                     : settings_.workers_per_gpu > 0 ? settings_.workers_per_gpu
                                                     : default_workers_per_gpu(cpus, static_cast<int>(gpu_count_));
  // Round by round (0, 1, 0, 1): the worker free longest takes the next request, so work spreads
  // over the GPUs first.
  std::vector<std::optional<int>> placed;
  for (int k = 0; k < workers_per_gpu_; ++k) placed.insert(placed.end(), gpus.begin(), gpus.end());
  // What the last run's first worker said about its GPU: the compile's target before a worker
  // answers, and its DRAM bandwidth, which a worker on that GPU then need not measure.
  device_file_ = fs::path(cache_) / fmt::format("device-{}.json", settings_.hide_gpus ? std::string("none")
                                                                                      : std::to_string(gpus.front().value_or(0)));
  if (fs::exists(device_file_)) {
    const auto j = nlohmann::json::parse(read_file(device_file_), nullptr, false);
    if (!j.is_discarded()) guessed_device_ = j.get<DeviceInfo>();
  }
  std::vector<std::string> worker_env = worker_thread_env(cpus, static_cast<int>(placed.size()));
  if (!guessed_device_.uuid.empty() && guessed_device_.measured_dram_gbps)
    worker_env.push_back(known_dram_env(guessed_device_.uuid, *guessed_device_.measured_dram_gbps));
  const std::string pycache = worker_bytecode_folder(cache_).string();  // one folder for all the workers
  // Only where trials can run: a machine without NVIDIA's device nodes (CI) runs none, and a
  // draw process there would only import torch beside every test's workers.
  if (!settings_.hide_gpus && settings_.options.trials > 0 && draw_processes() > 0 && sandbox::gpu_nodes_present()) {
    DrawAheadOptions d;
    d.worker_path = default_worker_path();
    d.env = worker_env;
    d.seed = settings_.options.seed;
    d.trials = settings_.options.trials;
    d.processes = draw_processes();
    draws_ = std::make_unique<DrawAhead>(std::move(d));
    if (!draws_->folder().empty()) worker_env.push_back(std::string(kDrawDirEnv) + "=" + draws_->folder());
  }
  // One lock usage per distinct GPU (a GPU named twice in --gpus has twice the workers on it).
  const auto usage_of = [&](std::optional<int> g) -> GpuLockUsage& {
    for (auto& [gpu, usage] : lock_usage_)
      if (gpu == g.value_or(-1)) return *usage;
    const auto n = static_cast<size_t>(std::count(placed.begin(), placed.end(), g));
    return *lock_usage_.emplace_back(g.value_or(-1), std::make_unique<GpuLockUsage>(n)).second;
  };
  std::map<std::optional<int>, size_t> on_gpu;  // workers placed on each GPU so far
  for (auto g : placed) {
    WorkerOptions wo;
    wo.env = worker_env;
    wo.pycache = pycache;
    wo.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(settings_.timeout_s * 1000));
    wo.phase_budgets = settings_.phase_budgets;
    if (settings_.hide_gpus) {
      // No device at all: the worker answers every evaluation with no_gpu after the compile.
      // Nothing to probe either (the probe looks for a device under the sandbox's layers).
      wo.env.insert(wo.env.end(), {"CUDA_VISIBLE_DEVICES=", std::string(sandbox::kCudaCheckedEnv) + "=1"});
    } else {
      wo.gpu = g;
      wo.lock_observer = [usage = &usage_of(g), slot = on_gpu[g]++](LockMode m, bool waiting) {
        usage->set(slot, m, waiting);
      };
      // Only where the worker sees the GPU: a hidden one would look like a memo gone stale.
      wo.cuda_probe_memo = (fs::path(cache_) / "sandbox" / "cuda-probe.json").string();
    }
    workers_.push_back(std::make_unique<Worker>(std::move(wo)));
    workers_.back()->stats.gpu = g.value_or(-1);
  }
  // Workers that time keep a few cores free of compilers (common/cpu_affinity.h); workers that
  // see no GPU time nothing.
  if (!settings_.hide_gpus) {
    std::string warning;
    compile_cpus_ = compiler_cpus(allowed_cpus(), reserved_cpus(static_cast<int>(workers_.size()), &warning));
    if (!warning.empty()) fmt::print(stderr, "kagent: warning: {}\n", warning);
  }
  compiler_ = std::make_unique<CompilePool>(settings_.compile_jobs);
  // Three per four cores: an answer's compile is two compiler chains side by side, but one of
  // them is short and the last steps (host compile, link) are single; 12 on 16 cores beside 2
  // kept free made 66.0 answers a minute against 8 beside 5 kept free, 57.2 (cpu_affinity.h).
  compile_slots_ = settings_.compile_jobs ? settings_.compile_jobs
                                          : std::max(1u, usable_cpu_count() * 3 / 4);
}

EvaluationPool::~EvaluationPool() {
  if (started_.valid()) started_.wait();  // the start thread uses the workers
}

void EvaluationPool::start(const std::string& warm_problem, bool warm_compile) {
  std::call_once(start_once_, [&] {
    started_ = std::async(std::launch::async, [this, warm_problem, warm_compile]() -> std::optional<WorkerError> {
                 // Every worker at once: each imports torch and measures its GPU's DRAM bandwidth
                 // (seconds), which one after the other would hold the last GPU back.
                 std::vector<std::future<std::variant<DeviceInfo, WorkerError>>> hellos;
                 int64_t footprint = 0;
                 {
                   std::lock_guard lock(mu_);
                   if (auto it = footprints_.find(warm_problem); it != footprints_.end()) footprint = it->second;
                 }
                 for (auto& w : workers_)
                   hellos.push_back(std::async(std::launch::async, [&w, &warm_problem, footprint, warm_compile] {
                     if (footprint > 0) w->client.set_footprint(warm_problem, footprint);
                     auto hello = w->client.hello();
                     if (std::holds_alternative<DeviceInfo>(hello) && !warm_problem.empty())
                       w->client.prepare(warm_problem, warm_compile);
                     return hello;
                   }));
                 std::optional<WorkerError> error;
                 for (size_t i = 0; i < hellos.size(); ++i) {
                   auto hello = hellos[i].get();
                   if (auto* err = std::get_if<WorkerError>(&hello)) {
                     if (!error) error = *err;
                     continue;
                   }
                   std::lock_guard lock(mu_);
                   if (!warm_problem.empty()) workers_[i]->problems.insert(problem_affinity_key(warm_problem));
                   if (!device_known_) {
                     device_ = std::get<DeviceInfo>(hello);
                     // The arch is known now: the headers build while the other workers start and
                     // the first problems open, instead of in the first answer's compile.
                     if (settings_.prepare_inline_headers)
                       headers_ = std::async(std::launch::async,
                                             [co = compile_options("", arch_for(device_))] { prepare_inline_headers(co); });
                   }
                   device_known_ = true;
                 }
                 return error;
               }).share();
  });
}

bool EvaluationPool::starting() const { return started_.valid(); }

std::variant<DeviceInfo, WorkerError> EvaluationPool::started() {
  start();
  if (auto err = started_.get()) return *err;
  std::lock_guard lock(mu_);
  if (!device_saved_) {
    device_saved_ = true;
    try {
      write_file_atomic(device_file_, nlohmann::json(device_).dump());  // next run's nvcc target, before its worker answers
    } catch (const std::exception&) {
    }
  }
  return device_;
}

DeviceInfo EvaluationPool::device() {
  auto d = started();
  return std::holds_alternative<DeviceInfo>(d) ? std::get<DeviceInfo>(d) : DeviceInfo{};
}

std::string EvaluationPool::arch_for(const DeviceInfo& d) const {
  if (!settings_.arch.empty()) return settings_.arch;
  if (d.available) return arch_for_compute_capability(d.cc_major, d.cc_minor);
  return CompileOptions{}.arch;
}

std::string EvaluationPool::current_arch() const {
  std::lock_guard lock(mu_);
  return arch_for(device_known_ ? device_ : guessed_device_);
}

CompileOptions EvaluationPool::compile_options(const std::string& display_name, const std::string& arch) const {
  CompileOptions co;
  co.display_name = display_name;
  co.arch = arch;
  co.use_cache = settings_.use_compile_cache;
  co.cpus = compile_cpus_;
  if (!settings_.cache_dir.empty()) co.cache_dir = (fs::path(settings_.cache_dir) / "compile").string();
  return co;
}

CompileInfo EvaluationPool::compile(const ProblemSpec& spec, const std::string& source, const std::string& display_name,
                                    const std::string& arch) {
  CompileInfo info = compiler_->submit(spec, source, compile_options(display_name, arch)).get();
  std::lock_guard lock(mu_);
  ++compiles_;
  return info;
}

WorkerClient& EvaluationPool::first_worker_before_start() { return workers_.front()->client; }

nlohmann::json EvaluationPool::first_worker_startup() const { return workers_.front()->client.startup(); }

size_t EvaluationPool::opening_workers() const {
  if (workers_per_gpu_ < 2) return workers_.size();
  return std::max<size_t>(1, workers_.size() - gpu_count_);
}

void EvaluationPool::expect_footprint(const std::string& problem, int64_t bytes) {
  std::lock_guard lock(mu_);
  footprints_[problem] = bytes;
}

std::vector<WorkerCharge> EvaluationPool::take_charges() {
  std::lock_guard lock(mu_);
  return std::exchange(charges_, {});
}

EvaluationPool::CompileSlot::CompileSlot(EvaluationPool& pool) : pool_(pool) {
  std::unique_lock lock(pool_.mu_);
  ++pool_.compile_waiting_;
  pool_.slot_freed_.wait(lock, [&] { return pool_.compiling_ < static_cast<int>(pool_.compile_slots_); });
  --pool_.compile_waiting_;
  ++pool_.compiling_;
}

EvaluationPool::CompileSlot::~CompileSlot() {
  {
    std::lock_guard lock(pool_.mu_);
    --pool_.compiling_;
    ++pool_.compiles_;
  }
  pool_.slot_freed_.notify_one();
}

size_t EvaluationPool::leased() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::count_if(workers_.begin(), workers_.end(), [](const auto& w) { return w->busy; }));
}

void EvaluationPool::account_locked(std::chrono::steady_clock::time_point now) {
  const double dt = std::chrono::duration<double>(now - last_change_).count();
  last_change_ = now;
  if (queue_.empty()) return;
  for (auto& w : workers_)
    if (!w->busy) w->stats.idle_while_queued_seconds += dt;
}

PoolCounters EvaluationPool::counters() const {
  std::lock_guard lock(mu_);
  PoolCounters c;
  c.compiles = compiles_;
  c.compiling = compiling_;
  c.compile_waiting = compile_waiting_;
  if (draws_) c.draws = draws_->counters();
  const auto now = std::chrono::steady_clock::now();
  const double pending = !queue_.empty() ? std::chrono::duration<double>(now - last_change_).count() : 0.0;
  for (const auto& w : workers_) {
    WorkerCounters s = w->stats;
    if (w->busy) s.held_seconds += std::chrono::duration<double>(now - w->changed_at).count();
    else s.idle_while_queued_seconds += pending;
    c.evaluations += s.evaluations;
    c.worker_busy_seconds += s.eval_seconds;
    c.workers.push_back(s);
  }
  for (const auto& [gpu, usage] : lock_usage_) c.gpu_locks.push_back({gpu, usage->totals(now)});
  return c;
}

void EvaluationPool::assign_locked(std::chrono::steady_clock::time_point now) {
  bool any = false;
  while (!queue_.empty()) {
    std::vector<size_t> free;  // the worker free longest first
    for (size_t i = 0; i < workers_.size(); ++i)
      if (!workers_[i]->busy) free.push_back(i);
    if (free.empty()) break;
    std::stable_sort(free.begin(), free.end(),
                     [&](size_t a, size_t b) { return workers_[a]->changed_at < workers_[b]->changed_at; });
    std::vector<const std::set<std::string>*> holds;
    for (size_t i : free) holds.push_back(&workers_[i]->problems);
    std::vector<const std::string*> waiting;
    for (const Waiter* q : queue_) waiting.push_back(&q->problem);
    const WorkerChoice c = choose_worker(holds, waiting, queue_.front()->passed_over >= kMaxPassedOver);
    const size_t pick = c.request, worker = free[c.worker];
    for (size_t q = 0; q < pick; ++q) ++queue_[q]->passed_over;
    Worker& w = *workers_[worker];
    w.busy = true;
    w.changed_at = now;
    queue_[pick]->worker = worker;
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(pick));
    any = true;
  }
  if (any) assigned_.notify_all();
}

EvaluationPool::Lease::Lease(EvaluationPool& pool, const std::string& problem)
    : pool_(pool), problem_(problem), affinity_(problem_affinity_key(problem)) {  // the file read outside the lock
  std::unique_lock lock(pool_.mu_);
  const auto now = std::chrono::steady_clock::now();
  pool_.account_locked(now);
  Waiter me{affinity_, std::nullopt, 0};
  pool_.queue_.push_back(&me);
  pool_.assign_locked(now);
  pool_.assigned_.wait(lock, [&] { return me.worker.has_value(); });
  index_ = *me.worker;
  if (auto it = pool_.footprints_.find(problem_); it != pool_.footprints_.end())
    pool_.workers_[index_]->client.set_footprint(problem_, it->second);  // leased: no other thread uses it now
}

EvaluationPool::Lease::~Lease() {
  std::lock_guard lock(pool_.mu_);
  const auto now = std::chrono::steady_clock::now();
  pool_.account_locked(now);
  Worker& w = *pool_.workers_[index_];
  for (auto& c : w.client.take_charges()) pool_.charges_.push_back(std::move(c));
  w.busy = false;
  w.stats.held_seconds += std::chrono::duration<double>(now - w.changed_at).count();
  w.stats.restarts = std::max(0, w.client.restarts());  // read here: no request of its is running
  w.changed_at = now;
  if (!affinity_.empty()) w.problems.insert(affinity_);
  pool_.assign_locked(now);
}

WorkerClient& EvaluationPool::Lease::client() { return pool_.workers_[index_]->client; }

void EvaluationPool::Lease::count_load(double seconds) {
  std::lock_guard lock(pool_.mu_);
  pool_.workers_[index_]->stats.load_seconds += seconds;
}

void EvaluationPool::Lease::count_baselines(double seconds) {
  std::lock_guard lock(pool_.mu_);
  pool_.workers_[index_]->stats.baselines_seconds += seconds;
}

void EvaluationPool::Lease::count_evaluation(double seconds) {
  std::lock_guard lock(pool_.mu_);
  ++pool_.workers_[index_]->stats.evaluations;
  pool_.workers_[index_]->stats.eval_seconds += seconds;
}

}  // namespace kagent
