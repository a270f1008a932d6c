#include "worker/service/worker_service.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <ATen/core/grad_mode.h>
#include <cuda_runtime_api.h>

#include "common/elapsed.h"
#include "cuda/cuda_error.h"
#include "timer/dram_bandwidth.h"
#include "worker/protocol/known_dram.h"
#include "worker/service/baselines.h"
#include "worker/service/calls.h"
#include "worker/service/evaluation.h"
#include "worker/service/gpu_memory.h"
#include "worker/service/gpu_wait.h"
#include "worker/service/phase_runner.h"
#include "worker/service/worker_state.h"

namespace kagent::worker {

namespace {

// Thrown for a request the worker cannot answer: the reply is an error line of this kind.
struct RequestError : std::runtime_error {
  RequestError(std::string kind_, const std::string& message) : std::runtime_error(message), kind(std::move(kind_)) {}
  std::string kind;
};

void require_gpu(const DeviceInfo& device) {
  if (!device.available) throw RequestError("no_gpu", "no CUDA device is visible to the worker");
}

// The problems a worker keeps loaded: those of a serve's batch or a solve's few, not every one
// of a collection's hundreds (each keeps up to HOST_INPUTS_BYTES of CPU draws, problem.py).
constexpr size_t kKeptProblems = 16;
constexpr int64_t kKeptProblemBytes = int64_t{4} << 30;

}  // namespace

WorkerService::WorkerService(PythonRuntime& py, Progress progress, std::optional<GpuTimingLock> joined)
    : py_(py), progress_(std::move(progress)), lock_(std::move(joined)), libraries_(std::filesystem::temp_directory_path().string()) {
  {
    const GpuTimingLock::Hold shared(lock(), LockMode::Shared);  // torch's CUDA start, for a joined lock
    device_ = to_json(py_.call(PyFn::DeviceInfo, {}).get()).get<DeviceInfo>();
  }
  if (!device_.available) {
    lock_.reset();
    return;
  }
  open_timing_lock();
  // Measured before on this GPU (protocol/known_dram.h): no wait for the lock.
  if (auto known = known_dram_gbps(std::getenv(kKnownDramEnv), device_.uuid)) {
    device_.measured_dram_gbps = known;
    return;
  }
  GpuTimingLock::Hold alone(lock(), LockMode::Exclusive);
  device_.measured_dram_gbps = measure_dram_gbps(device_.memory_bytes);
}

void WorkerService::open_timing_lock() {
  const char* folder = std::getenv(kTimingLockDirEnv);
  if (!folder || !*folder) return;  // and nothing joined (join_timing_lock_early needs the folder too)
  // Created by the orchestrator (the sandbox refuses opens for writing); missing: unlocked,
  // which the hello says, and the orchestrator then counts every other process as contention.
  const std::string path = gpu_timing_lock_path(folder, device_.uuid);
  if (!lock_ || lock_->path() != path) {  // else joined before CUDA started, the right GPU's
    lock_.reset();  // another GPU's (one description per process: two would wait on each other)
    lock_ = GpuTimingLock::open(path, timing_lock_hooks(progress_));
  }
  if (!lock_) {
    std::fprintf(stderr, "kagent-worker: no GPU timing lock at %s: timings run unlocked\n", path.c_str());
    return;  // and the worker spins throughout: no lock says when it times
  }
  if (lock_->broken()) return;  // unlocked for good already: the worker spins throughout
  // CUDA has started: how the worker waits for the GPU outside its timings (gpu_wait.h).
  if (int device = 0; cudaGetDevice(&device) == cudaSuccess) (void)process_gpu_wait().start(device);
  else (void)cudaGetLastError();
}

ProblemSession& WorkerService::problem(const std::string& path) {
  auto it = problems_.find(path);
  if (it == problems_.end()) {
    let_go_of_old_problems();
    auto session = std::make_unique<ProblemSession>(py_, path);
    it = problems_.emplace(path, LoadedProblem{std::move(session), 0}).first;
  }
  it->second.last_use = ++uses_;
  return *it->second.session;
}

void WorkerService::let_go_of_old_problems() {
  // Called before another problem loads, between requests' uses of a session: the least
  // recently used go while too many are kept, or too much host memory.
  const auto kept_bytes = [&] {
    int64_t sum = 0;
    for (const auto& [path, p] : problems_) sum += p.session->kept_bytes();
    return sum;
  };
  while (!problems_.empty() && (problems_.size() >= kKeptProblems || kept_bytes() > kKeptProblemBytes)) {
    auto oldest = problems_.begin();
    for (auto p = problems_.begin(); p != problems_.end(); ++p)
      if (p->second.last_use < oldest->second.last_use) oldest = p;
    problems_.erase(oldest);
  }
}

protocol::HelloReply WorkerService::on(const protocol::HelloRequest&) {
  return {device_, ::getpid(), sandbox_, lock_ && !lock_->broken() ? lock_->path() : std::string(), startup_};
}

ProblemSpec WorkerService::on(const protocol::LoadProblemRequest& r) {
  problems_.erase(r.path);  // a file may have changed since; loading is cheap (meta tensors)
  return problem(r.path).spec();
}

protocol::PrepareReply WorkerService::on(const protocol::PrepareRequest& r) {
  // Sent while nvcc compiles: load the problem and run the reference once, so the evaluation
  // that follows starts warm. Failures are reported by that evaluation.
  ProblemSession& session = problem(r.path);
  if (device_.available) {
    at::NoGradGuard no_grad;
    const EvalOptions defaults;  // what an evaluation of it will ask for, unless told otherwise
    session.prefetch(defaults.seed, defaults.trials);  // nothing held: the CPU's share
    const GpuTimingLock::Hold shared(lock(), LockMode::Shared);
    py_.call(PyFn::WarmUp, {session.problem()});
    if (r.compile_warm && !compile_warmed_) {
      // Under the shared hold, as the warm-up's run: at the pool's start nothing is timed yet.
      compile_warmed_ = true;
      try {
        PyRef model = session.make_model("cuda", defaults.seed);
        const Values inputs = session.make_inputs("cuda", defaults.seed);
        PythonRunner compiled(py_.call(PyFn::CompiledModel, {model}));
        call_reference(compiled, inputs);
      } catch (const cuda::ContextLost&) {
        throw;
      } catch (const std::exception&) {
        // the problem's compiled baseline will meet the same failure and say so
      }
    }
    if (!profiler_.warm()) {  // once per worker; its setup would otherwise land in the first evaluation
      GpuTimingLock::Hold alone(lock(), LockMode::Exclusive);  // CUPTI's counters: the GPU to itself
      profiler_.warm_up();
    }
    release_cached_gpu_memory();  // the GPU's other processes may need it before the evaluation comes
  }
  return {};
}

EvalResult WorkerService::on(const protocol::EvaluateRequest& r) {
  EvalResult result;
  result.format = r.candidate.format;
  result.device = device_;
  if (!device_.available) {
    result.status = Status::InternalError;
    result.reason = reason::kNoGpu;
    result.message = "no CUDA device is visible to the worker";
    return result;
  }
  ProblemSession* session = nullptr;
  try {
    session = &problem(r.problem);
  } catch (const PythonError& e) {
    result.status = Status::ProblemError;
    result.reason = problem_error_reason(e.kind);
    result.message = e.message;
    return result;
  }
  // Each phase on the pipe as it starts, for the orchestrator's per-phase budgets.
  const auto prefetch_start = std::chrono::steady_clock::now();
  announce_phase(progress_, "prefetch");
  session->prefetch(r.options.seed, r.options.trials);  // nothing held: the CPU's share
  const double prefetch_s = seconds_since(prefetch_start);
  // The request's hold: shared, exclusive from the evaluation's timing on (evaluation.cpp), let
  // go when the request ends.
  const GpuTimingLock::Hold shared(lock(), LockMode::Shared);
  // CUPTI starts its threads when first set up: before the snapshot, so they are the worker's.
  if (r.options.profile && !profiler_.warm()) {
    GpuTimingLock::Hold alone(lock(), LockMode::Exclusive);  // CUPTI's counters: the GPU to itself
    profiler_.warm_up();
  }
  WorkerState state(py_, device_);  // what the candidate must leave as it found it
  {
    Evaluation evaluation({py_, device_, profiler_, libraries_, lock(), &state, progress_, idle_release_}, *session, r);
    try {
      result = evaluation();
    } catch (const std::exception& e) {
      // A step of kagent's that threw past the evaluation's own handling (a capture the
      // candidate left open refuses kagent's next CUDA call): still a reply, and still the state
      // check below, which charges the candidate with what it left and replaces this worker.
      result = EvalResult{};
      result.format = r.candidate.format;
      result.device = device_;
      result.status = Status::InternalError;
      result.reason = reason::kEvaluatorError;
      result.message = std::string("kagent's evaluation failed: ") + e.what();
    }
    context_lost_ = evaluation.context_lost();
    state.adopt_threads(evaluation.kagent_threads());
  }  // the candidate's objects are dropped here, before the check
  const auto check_start = std::chrono::steady_clock::now();
  announce_phase(progress_, "state_check");
  result.isolation.left_behind = state.check_and_restore(context_lost_);
  charge_left_behind(result);
  replace_ = state.must_replace();
  // The request's own steps around the evaluation's phases, so that a record accounts for the
  // worker's time: the CPU's share first (no lock held), the check of what the candidate left last.
  result.phases.insert(result.phases.begin(), PhaseRecord{"prefetch", prefetch_s, 0, ""});
  result.phases.push_back(PhaseRecord{"state_check", seconds_since(check_start), 0, ""});
  return result;
}

protocol::BaselinesReply WorkerService::on(const protocol::BaselinesRequest& r) {
  // The reference's eager and torch.compile times before any candidate is correct (for the
  // task prompt); measured like an evaluation's, and the orchestrator caches them.
  require_gpu(device_);
  at::NoGradGuard no_grad;
  ProblemSession& session = problem(r.problem);
  session.prefetch(r.options.seed, 0);  // nothing held: the reference's CPU construction
  const GpuTimingLock::Hold shared(lock(), LockMode::Shared);  // exclusive where it times (baselines.cpp)
  const Baselines b = get_baselines(py_, session, r.options, device_, nullptr, lock());
  release_cached_gpu_memory();
  return {b.eager, b.compiled, b.compiled_error, b.cache_hit, b.recheck};
}

protocol::ShutdownReply WorkerService::on(const protocol::ShutdownRequest&) {
  shutdown_ = true;
  return {};
}

template <class Request>
nlohmann::json WorkerService::dispatch(const nlohmann::json& line) {
  Request request;
  try {
    request = line.get<Request>();
  } catch (const std::exception& e) {
    throw RequestError("bad_request", e.what());
  }
  // No request holds the GPU's timing lock as a whole. Loading a problem runs its (trusted) file
  // and derives its spec on meta tensors: the CPU's work. Prepare, evaluate and baselines do the
  // CPU's share of their problem first with nothing held (ProblemSession::prefetch), then hold
  // it shared, and exclusively for what they time (evaluation.cpp, baselines.cpp): a sibling
  // worker's timing waits for GPU work only, not for a problem's CPU construction.
  auto reply = on(request);
  nlohmann::json out = protocol::ok_line(reply, context_lost_);
  if (replace_ && !context_lost_) out["replace"] = true;  // exits after this reply (worker_state.h)
  return out;
}

nlohmann::json WorkerService::handle(const nlohmann::json& line) {
  using protocol::Op;
  try {
    switch (protocol::op_of(line)) {
      case Op::Hello: return dispatch<protocol::HelloRequest>(line);
      case Op::LoadProblem: return dispatch<protocol::LoadProblemRequest>(line);
      case Op::Prepare: return dispatch<protocol::PrepareRequest>(line);
      case Op::Evaluate: return dispatch<protocol::EvaluateRequest>(line);
      case Op::Baselines: return dispatch<protocol::BaselinesRequest>(line);
      case Op::Shutdown: return dispatch<protocol::ShutdownRequest>(line);
    }
    return protocol::error_line("bad_request", "unhandled op");
  } catch (const std::invalid_argument& e) {  // a missing or unknown op
    return protocol::error_line("bad_request", e.what());
  } catch (const RequestError& e) {
    return protocol::error_line(e.kind, e.what());
  } catch (const PythonError& e) {
    return protocol::error_line(e.kind, e.message);
  } catch (const std::exception& e) {
    return protocol::error_line("internal_error", e.what());
  }
}

}  // namespace kagent::worker
