// A function called at the entry of every CUDA runtime and driver API call of this process, on
// the thread that makes it, while the hook lives (CUPTI's callback API). The worker's idle release
// of the GPU's timing lock takes the lock back there before the call proceeds
// (worker/service/idle_lock_release.h).
//
// CUPTI allows one callback subscriber per process: where another holds it (a candidate's
// torch.profiler, through Kineto; Nsight tools), the hook is inactive and says why. While the
// hook lives, such a tool cannot subscribe either. Domains are enabled only for the hook's
// lifetime: no cost on any CUDA call outside it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace kagent::profiler {

class CudaCallHook {
 public:
  explicit CudaCallHook(std::function<void()> on_call);
  ~CudaCallHook();  // no call of on_call runs once it returns
  CudaCallHook(const CudaCallHook&) = delete;
  CudaCallHook& operator=(const CudaCallHook&) = delete;

  bool active() const { return active_; }
  const std::string& why_inactive() const { return why_; }

  struct State;  // shared with CUPTI's callback

 private:
  std::unique_ptr<State> state_;
  bool active_ = false;
  std::string why_;
};

}  // namespace kagent::profiler
