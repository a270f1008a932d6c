// A problem loaded in the worker: its Python objects, its spec, and how to make
// reproducible models and inputs on the GPU.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "problem/problem_spec.h"
#include "worker/python/python_runtime.h"
#include "worker/service/runners.h"

namespace kagent::worker {

class ProblemSession {
 public:
  // Executes the problem file. Throws PythonError with kind file_not_found /
  // problem_load_error / problem_incomplete.
  ProblemSession(PythonRuntime& py, const std::string& path);

  // Derived on first use: an evaluation does not need it, and deriving costs a meta forward.
  const ProblemSpec& spec();
  const nlohmann::json& spec_json();
  const std::string& sha256() const { return sha256_; }
  PyRef problem() const { return problem_; }

  // The reference Model on `device`, weights drawn from `seed` (KernelBench's convention).
  PyRef make_model(const std::string& device, int64_t seed);
  // get_inputs() on `device` under `seed`.
  Values make_inputs(const std::string& device, int64_t seed);
  // The model's parameters and buffers in state_dict order, as a native candidate takes them.
  Values state_values(PyObject* model);

 private:
  PythonRuntime& py_;
  PyRef problem_;
  std::string sha256_;
  std::optional<ProblemSpec> spec_;
  nlohmann::json spec_json_;
};

}  // namespace kagent::worker
