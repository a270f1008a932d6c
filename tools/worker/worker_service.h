// The worker's request handler: one JSON request in, one JSON reply out.
// Requests: {"op":"hello"}, {"op":"load_problem","path"}, {"op":"prepare","path"}, {"op":"evaluate","problem",
// "candidate":{"format":"cuda","artifact","op_name"} | {"format":"kernelbench","path"}, "options"}.
// Replies: {"ok":true,"result":...} or {"ok":false,"error":{"kind","message"}}; "fatal":true
// when the CUDA context is lost and the process must be replaced.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "worker/problem_session.h"
#include "worker/profile_phase.h"
#include "worker/python_runtime.h"

namespace kagent::worker {

class WorkerService {
 public:
  explicit WorkerService(PythonRuntime& py);
  nlohmann::json handle(const nlohmann::json& request);
  bool must_exit() const { return fatal_; }
  const nlohmann::json& device() const { return device_; }

 private:
  ProblemSession& problem(const std::string& path);
  nlohmann::json evaluate(const nlohmann::json& request);

  PythonRuntime& py_;
  nlohmann::json device_;
  std::map<std::string, std::unique_ptr<ProblemSession>> problems_;  // by path
  ProfilePhase profile_;
  bool fatal_ = false;
};

}  // namespace kagent::worker
