// The worker's request handler: one request line in, one reply line out, each op of the
// protocol (worker/protocol/protocol.h) answered by its typed handler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result/device_info.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/protocol/protocol.h"
#include "worker/service/worker_timing_lock.h"
#include "worker/python/python_runtime.h"
#include "worker/service/idle_lock_release.h"
#include "worker/service/library_instances.h"
#include "worker/service/problem_session.h"
#include "worker/service/profile_phase.h"

namespace kagent::worker {

class WorkerService {
 public:
  using Progress = worker::Progress;

  // Describes the GPU: torch's facts from Python, the DRAM bandwidth measured by the timer
  // (with the GPU's timing lock held exclusively: a sibling worker may be starting too). Opens
  // the timing lock file in $KAGENT_GPU_TIMING_LOCK_DIR when there is one, or takes `joined`
  // (join_timing_lock_early's) where it is that GPU's.
  explicit WorkerService(PythonRuntime& py, Progress progress = {}, std::optional<GpuTimingLock> joined = std::nullopt);

  // A request line (with its "op") -> the reply line, without the id.
  nlohmann::json handle(const nlohmann::json& request);
  // The CUDA context is lost, a candidate left what cannot be put back (worker_state.h), or a
  // shutdown was asked: exit after the reply.
  bool must_exit() const { return context_lost_ || replace_ || shutdown_; }
  // Whether the last reply has to carry "fatal" (the context is lost).
  const DeviceInfo& device() const { return device_; }
  // The sandbox report the hello carries (set once the sandbox is closed).
  void set_sandbox_report(nlohmann::json report) { sandbox_ = std::move(report); }
  // The start-up steps' seconds the hello carries (protocol::HelloReply::startup).
  void set_startup(nlohmann::json steps) { startup_ = std::move(steps); }

  protocol::HelloReply on(const protocol::HelloRequest&);
  ProblemSpec on(const protocol::LoadProblemRequest& r);
  protocol::PrepareReply on(const protocol::PrepareRequest& r);
  EvalResult on(const protocol::EvaluateRequest& r);
  protocol::BaselinesReply on(const protocol::BaselinesRequest& r);
  protocol::ShutdownReply on(const protocol::ShutdownRequest&);

 private:
  template <class Request>
  nlohmann::json dispatch(const nlohmann::json& line);
  ProblemSession& problem(const std::string& path);
  void let_go_of_old_problems();
  void open_timing_lock();
  GpuTimingLock* lock() { return lock_ ? &*lock_ : nullptr; }

  PythonRuntime& py_;
  Progress progress_;
  DeviceInfo device_;
  // The GPU's timing lock (gpu_timing_lock.h): each request holds it as its op needs (shared
  // for GPU work, none for the CPU's share of a problem), and what is timed exclusively.
  std::optional<GpuTimingLock> lock_;
  std::chrono::milliseconds idle_release_ = idle_release_from_environment();  // idle_lock_release.h
  nlohmann::json sandbox_ = nlohmann::json::object();
  nlohmann::json startup_ = nlohmann::json::object();
  // The problems loaded, by path, with when each was last used: the worker keeps the recent ones
  // (kKeptProblems, kKeptProblemBytes of host memory: worker_service.cpp), a long collection
  // or serve would otherwise keep every problem's CPU draws and reference copies.
  struct LoadedProblem {
    std::unique_ptr<ProblemSession> session;
    uint64_t last_use = 0;
  };
  std::map<std::string, LoadedProblem> problems_;
  uint64_t uses_ = 0;
  ProfilePhase profiler_;
  bool compile_warmed_ = false;  // torch.compile has run once in this process (PrepareRequest::compile_warm)
  LibraryInstances libraries_;
  bool context_lost_ = false;
  bool replace_ = false;  // the reply says "replace": a fresh worker takes the next request
  bool shutdown_ = false;
};

}  // namespace kagent::worker
