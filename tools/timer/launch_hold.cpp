#include "timer/launch_hold.h"

#include <atomic>

#include "cuda/cuda_error.h"

namespace kagent {

std::unique_ptr<LaunchHold> LaunchHold::make(std::chrono::milliseconds timeout, std::string& why) {
  void* fn = cuda::driver_entry_point("cuStreamWaitValue32");
  if (!fn) {
    why = "the driver has no cuStreamWaitValue32";
    return nullptr;
  }
  void* host = nullptr;
  KAGENT_CUDA_CHECK(cudaHostAlloc(&host, sizeof(uint32_t), cudaHostAllocMapped));
  auto* counter = static_cast<uint32_t*>(host);
  *counter = 0;
  void* device = nullptr;
  if (const cudaError_t e = cudaHostGetDevicePointer(&device, host, 0); e != cudaSuccess) {
    (void)cudaFreeHost(host);
    KAGENT_CUDA_CHECK(e);
  }
  return std::unique_ptr<LaunchHold>(new LaunchHold(timeout, reinterpret_cast<WaitValue32>(fn), counter,
                                                    reinterpret_cast<CUdeviceptr>(device)));
}

LaunchHold::LaunchHold(std::chrono::milliseconds timeout, WaitValue32 wait, uint32_t* counter, CUdeviceptr device_counter)
    : timeout_(timeout), wait_(wait), counter_(counter), device_counter_(device_counter), watchdog_([this] { watch(); }) {}

LaunchHold::~LaunchHold() {
  {
    const std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  watchdog_.join();
  publish(next_);  // nothing may still wait on the counter once it is freed
  (void)cudaStreamSynchronize(nullptr);
  (void)cudaFreeHost(counter_);  // destructors must not throw
}

void LaunchHold::publish(uint32_t value) {
  std::atomic_ref<uint32_t>(*counter_).store(value, std::memory_order_release);
}

void LaunchHold::hold(cudaStream_t stream) {
  const uint32_t value = next_ + 1;  // only this thread writes next_
  KAGENT_CUDA_CHECK(wait_(reinterpret_cast<CUstream>(stream), device_counter_, value, CU_STREAM_WAIT_VALUE_GEQ));
  bool wake = false;
  {
    const std::lock_guard lock(m_);  // the watchdog reads next_
    next_ = value;
    armed_ = true;
    fired_ = false;
    deadline_ = std::chrono::steady_clock::now() + timeout_;
    wake = idle_;
  }
  // Once per measurement, not per timed iteration: a watchdog already waiting for an earlier
  // deadline finds the later one when that wait ends, and waits again.
  if (wake) cv_.notify_all();
}

bool LaunchHold::release() {
  bool fired = false;
  {
    const std::lock_guard lock(m_);
    fired = fired_;
    armed_ = false;
    fired_ = false;
  }
  publish(next_);
  return !fired;
}

void LaunchHold::watch() {
  std::unique_lock lock(m_);
  while (!stop_) {
    if (!armed_) {
      idle_ = true;
      cv_.wait(lock);
      idle_ = false;
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      publish(next_);
      fired_ = true;
      armed_ = false;
    }
  }
}

}  // namespace kagent
