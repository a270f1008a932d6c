#include "evaluation/evaluation_pool.h"

#include <fmt/format.h>

#include "common/files.h"
#include "common/paths.h"
#include "compiler/nvcc_command.h"
#include "sandbox/cuda_probe.h"

namespace kagent {

namespace fs = std::filesystem;

struct EvaluationPool::Worker {
  explicit Worker(WorkerOptions o) : client(std::move(o)) {}
  WorkerClient client;
  bool busy = false;
  std::chrono::steady_clock::time_point changed_at = std::chrono::steady_clock::now();  // leased or freed
  WorkerCounters stats;
};

EvaluationPool::EvaluationPool(EvaluationSettings settings) : settings_(std::move(settings)) {
  cache_ = settings_.cache_dir.empty() ? cache_root() : settings_.cache_dir;
  std::vector<std::optional<int>> gpus;
  for (int g : settings_.gpus) gpus.emplace_back(g);
  if (gpus.empty()) gpus.emplace_back(std::nullopt);
  for (auto g : gpus) {
    WorkerOptions wo;
    wo.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(settings_.timeout_s * 1000));
    if (settings_.hide_gpus) {
      // No device at all: the worker answers every evaluation with no_gpu after the compile.
      // Nothing to probe either (the probe looks for a device under the sandbox's layers).
      wo.env = {"CUDA_VISIBLE_DEVICES=", std::string(sandbox::kCudaCheckedEnv) + "=1"};
    } else {
      wo.gpu = g;
    }
    workers_.push_back(std::make_unique<Worker>(std::move(wo)));
    workers_.back()->stats.gpu = g.value_or(-1);
  }
  compiler_ = std::make_unique<CompilePool>(settings_.compile_jobs);
  device_file_ = fs::path(cache_) / fmt::format("device-{}.json", settings_.hide_gpus ? std::string("none")
                                                                                      : std::to_string(gpus.front().value_or(0)));
  if (fs::exists(device_file_)) {
    const auto j = nlohmann::json::parse(read_file(device_file_), nullptr, false);
    if (!j.is_discarded()) guessed_device_ = j.get<DeviceInfo>();
  }
}

EvaluationPool::~EvaluationPool() {
  if (started_.valid()) started_.wait();  // the start thread uses the workers
}

void EvaluationPool::start(const std::string& warm_problem) {
  std::call_once(start_once_, [&] {
    started_ = std::async(std::launch::async, [this, warm_problem]() -> std::optional<WorkerError> {
                 for (auto& w : workers_) {
                   auto hello = w->client.hello();
                   if (auto* err = std::get_if<WorkerError>(&hello)) return *err;
                   {
                     std::lock_guard lock(mu_);
                     if (!device_known_) device_ = std::get<DeviceInfo>(hello);
                     device_known_ = true;
                   }
                   if (!warm_problem.empty()) w->client.prepare(warm_problem);
                 }
                 return std::nullopt;
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

void EvaluationPool::account_locked(std::chrono::steady_clock::time_point now) {
  const double dt = std::chrono::duration<double>(now - last_change_).count();
  last_change_ = now;
  if (waiting_ == 0) return;
  for (auto& w : workers_)
    if (!w->busy) w->stats.idle_while_queued_seconds += dt;
}

PoolCounters EvaluationPool::counters() const {
  std::lock_guard lock(mu_);
  PoolCounters c;
  c.compiles = compiles_;
  const auto now = std::chrono::steady_clock::now();
  const double pending = waiting_ > 0 ? std::chrono::duration<double>(now - last_change_).count() : 0.0;
  for (const auto& w : workers_) {
    WorkerCounters s = w->stats;
    if (w->busy) s.held_seconds += std::chrono::duration<double>(now - w->changed_at).count();
    else s.idle_while_queued_seconds += pending;
    c.evaluations += s.evaluations;
    c.worker_busy_seconds += s.eval_seconds;
    c.workers.push_back(s);
  }
  return c;
}

EvaluationPool::Lease::Lease(EvaluationPool& pool) : pool_(pool) {
  std::unique_lock lock(pool_.mu_);
  pool_.account_locked(std::chrono::steady_clock::now());
  ++pool_.waiting_;
  pool_.free_.wait(lock, [&] {
    bool found = false;
    for (size_t i = 0; i < pool_.workers_.size(); ++i) {
      const auto& w = *pool_.workers_[i];
      if (!w.busy && (!found || w.changed_at < pool_.workers_[index_]->changed_at)) {
        index_ = i;
        found = true;
      }
    }
    return found;
  });
  const auto now = std::chrono::steady_clock::now();
  pool_.account_locked(now);
  --pool_.waiting_;
  Worker& w = *pool_.workers_[index_];
  w.busy = true;
  w.changed_at = now;
}

EvaluationPool::Lease::~Lease() {
  {
    std::lock_guard lock(pool_.mu_);
    const auto now = std::chrono::steady_clock::now();
    pool_.account_locked(now);
    Worker& w = *pool_.workers_[index_];
    w.busy = false;
    w.stats.held_seconds += std::chrono::duration<double>(now - w.changed_at).count();
    w.changed_at = now;
  }
  pool_.free_.notify_one();
}

WorkerClient& EvaluationPool::Lease::client() { return pool_.workers_[index_]->client; }

void EvaluationPool::Lease::count_evaluation(double seconds) {
  std::lock_guard lock(pool_.mu_);
  ++pool_.workers_[index_]->stats.evaluations;
  pool_.workers_[index_]->stats.eval_seconds += seconds;
}

}  // namespace kagent
