// A problem loaded in the worker: its Python objects, its spec, and how to make
// reproducible models and inputs on the GPU.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

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

  // The reference Model on `device`, built as KernelBench's harness builds it from `seed` (on
  // the CPU, then moved; kagent_worker/problem.py).
  PyRef make_model(const std::string& device, int64_t seed);
  // get_inputs() drawn on `device` under `seed`: kagent's own evidence (guards, timing).
  Values make_inputs(const std::string& device, int64_t seed);
  // A correctness trial's inputs as KernelBench draws them: on the CPU under `seed`, then moved.
  Values kernelbench_inputs(const std::string& device, int64_t seed);
  // KernelBench's trial seeds for `count` trials from `seed`.
  std::vector<int64_t> trial_seeds(int64_t seed, int count);
  // The model's parameters and buffers in state_dict order, as a native candidate takes them.
  Values state_values(PyObject* model);
  // The CPU's share of an evaluation, ahead of it and touching no GPU (the worker holds none of
  // the timing lock meanwhile): the reference's CPU copy and, for `trials` > 0, the trials' CPU
  // draws. Never throws: what fails here fails again, reported, where it is needed.
  void prefetch(int64_t seed, int trials);
  // Host memory the problem keeps (its share of its source's trial draws, which problems of the
  // same text share; the reference's CPU copies): what the worker weighs when it lets go of
  // problems. Asked each time (a share changes when another problem of the text comes or goes).
  int64_t kept_bytes();

  // Cached baselines this worker has already re-checked on this problem (baselines.cpp).
  bool baseline_checked(const std::string& key) const { return baselines_checked_.contains(key); }
  void mark_baseline_checked(const std::string& key) { baselines_checked_.insert(key); }

 private:
  Values inputs(const char* method, const std::string& device, int64_t seed);

  PythonRuntime& py_;
  PyRef problem_;
  std::string sha256_;
  std::optional<ProblemSpec> spec_;
  nlohmann::json spec_json_;
  std::set<std::string> baselines_checked_;
};

}  // namespace kagent::worker
