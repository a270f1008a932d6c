// The guards that look at the worker's Python side (kagent_worker.py does the looking):
// timing_tampered / torch_patched (identities of timing functions, torch's functions, Tensor
// and nn.Module methods, the reference problem's classes and torch's precision settings, taken
// before the candidate loads and compared later), threads (Python threads a candidate left
// running), and the static checks of a kernelbench candidate's source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "result/eval_result.h"
#include "worker/python/python_runtime.h"

namespace kagent::worker {

class PythonWatch {
 public:
  // Takes the identity snapshot: construct it before the candidate loads.
  explicit PythonWatch(PythonRuntime& py);

  // The Python threads alive now become the baseline (after the candidate loaded: loading
  // may legitimately start library threads; forward may not).
  void mark_threads();

  // timing_tampered / torch_patched findings for what changed since construction; cudnn.benchmark
  // put back, and a cudnn_benchmark finding the first time it was seen changed.
  std::vector<GuardFinding> tampering() const;
  // cudnn.benchmark put back where the candidate changed it (reported by the next tampering()):
  // right after it loads, so that its trials and the reference's run with cuDNN's default choice.
  void put_back_autotuning() const;
  // A threads finding for Python threads started since mark_threads() and still alive.
  std::optional<GuardFinding> new_threads() const;

 private:
  PythonRuntime& py_;
  PyRef snapshot_;
  PyRef threads_;
};

// try_except_fallback, threads and torch_ops_in_forward findings for a kernelbench source file.
std::vector<GuardFinding> scan_kernelbench_source(PythonRuntime& py, const std::string& path);

// Findings as kagent_worker.py returns them (a list of {"name","action","message"} dicts).
std::vector<GuardFinding> findings_from_python(PyObject* list);

}  // namespace kagent::worker
