// The worker's request handler: one request line in, one reply line out, each op of the
// protocol (worker/protocol/protocol.h) answered by its typed handler.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "result/device_info.h"
#include "worker/protocol/protocol.h"
#include "worker/python/python_runtime.h"
#include "worker/service/library_instances.h"
#include "worker/service/problem_session.h"
#include "worker/service/profile_phase.h"

namespace kagent::worker {

class WorkerService {
 public:
  // Describes the GPU: torch's facts from Python, the DRAM bandwidth measured by the timer.
  explicit WorkerService(PythonRuntime& py);

  // A request line (with its "op") -> the reply line, without the id.
  nlohmann::json handle(const nlohmann::json& request);
  // The CUDA context is lost, a candidate left what cannot be put back (worker_state.h), or a
  // shutdown was asked: exit after the reply.
  bool must_exit() const { return context_lost_ || replace_ || shutdown_; }
  // Whether the last reply has to carry "fatal" (the context is lost).
  const DeviceInfo& device() const { return device_; }
  // The sandbox report the hello carries (set once the sandbox is closed).
  void set_sandbox_report(nlohmann::json report) { sandbox_ = std::move(report); }

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

  PythonRuntime& py_;
  DeviceInfo device_;
  nlohmann::json sandbox_ = nlohmann::json::object();
  std::map<std::string, std::unique_ptr<ProblemSession>> problems_;  // by path
  ProfilePhase profiler_;
  LibraryInstances libraries_;
  bool context_lost_ = false;
  bool replace_ = false;  // the reply says "replace": a fresh worker takes the next request
  bool shutdown_ = false;
};

}  // namespace kagent::worker
