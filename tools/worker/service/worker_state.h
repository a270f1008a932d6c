// Worker hygiene: a worker serves many candidates, so after every evaluation it proves that
// its process is in the state the evaluation found it in, puts back what can be put back, or
// asks to be replaced. What one candidate leaves behind must never change another's verdict.
//
// Captured before the evaluation, checked after it (its objects already dropped):
//   CUDA         a sticky error (the context is lost), an error left pending (cleared), a graph
//                capture still in progress on any stream (no unsafe call is allowed then)
//   Python       kagent_worker/hygiene.py: random generators (CPU, CUDA with its graph-capture
//                flag), default dtype and device, grad and autocast modes, torch.backends
//                flags, memory fraction, current stream, torch function and dispatch modes,
//                replaced torch or reference functions, Python threads still running
//   threads      native threads started during the evaluation that still compute
//   GPU memory   tensors or CUDA graphs the candidate kept alive past its evaluation
//   allocator    the caching allocator's settings (expandable segments, split size, ...)
// The cached GPU memory is then released, so that other processes on the GPU can use it.
// Each finding is a LeftBehind (result/isolation.h); charged ones made the worker unusable.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "result/device_info.h"
#include "result/isolation.h"
#include "worker/python/python_runtime.h"

namespace kagent::worker {

class WorkerState {
 public:
  // Captures the state now (before a request runs a candidate).
  WorkerState(PythonRuntime& py, const DeviceInfo& device);
  // It keeps a reference to the device: a temporary would dangle (a test did, and read a stale
  // `available` once its own code was built at -O1).
  WorkerState(PythonRuntime& py, DeviceInfo&& device) = delete;

  // After the request: what differs, put back where possible. `context_lost`: the evaluation
  // already found the CUDA context gone (the worker exits anyway; nothing else is checked).
  std::vector<LeftBehind> check_and_restore(bool context_lost);
  // During the evaluation, where the reference failed beside the candidate: the Python state
  // put back as captured (the evaluation's own no_grad kept), so that the reference can be run
  // alone (reference_check.h). Returns what differed; check_and_restore reports it too.
  std::vector<LeftBehind> put_back_python_now();
  // Threads that kagent's own steps started during the request (torch.compile's pools in the
  // baselines phase): not the candidate's, so not checked.
  void adopt_threads(const std::set<pid_t>& threads) { threads_.insert(threads.begin(), threads.end()); }
  // Some finding could not be put back: the worker must exit after its reply.
  bool must_replace() const { return replace_; }

 private:
  // Whether a graph capture is still open (the allocator's calls are refused while it is).
  bool check_cuda(std::vector<LeftBehind>& out);
  void check_python(std::vector<LeftBehind>& out);
  void check_threads(std::vector<LeftBehind>& out);
  void check_memory(std::vector<LeftBehind>& out);
  void check_allocator(std::vector<LeftBehind>& out);
  void add(std::vector<LeftBehind>& out, LeftBehind item);

  PythonRuntime& py_;
  const DeviceInfo& device_;
  PyRef snapshot_;
  std::string capture_error_;  // why there is no snapshot
  std::set<pid_t> threads_;
  int64_t allocated_bytes_ = 0;
  std::string allocator_settings_;
  bool replace_ = false;
  std::vector<LeftBehind> put_back_early_;  // by put_back_python_now, for the report after the request
};

// The tasks (threads) of this process, from /proc/self/task.
std::set<pid_t> own_threads();
// CPU time a task of this process used so far, in clock ticks; -1 when it is gone.
int64_t thread_cpu_ticks(pid_t tid);
// Its state letter from /proc ('R' running or runnable, 'S' sleeping, ...); '?' when it is gone.
char thread_state(pid_t tid);

}  // namespace kagent::worker
