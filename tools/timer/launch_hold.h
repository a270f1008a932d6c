// LaunchHold: keeps a stream waiting until the host has issued the whole timed call, after
// nvbench's blocking kernel, so that the call's kernels run back to back and the events time the
// GPU's work, not the pace at which a Python forward reaches its launches. That pace moved with
// the CPU's load: on the H200, under `kagent serve`, a 20-120 us candidate's median moved by 20-70%
// between evaluations of the same answer (issue 46), while millisecond kernels repeated within 2%.
//
// The hold is cuStreamWaitValue32 on a pinned counter, through the runtime's driver entry point:
// no kernel of our own to build, nothing links libcuda. A call that waits for its own stream
// (`.item()`, a synchronize) would wait for the hold forever, so a watchdog thread lets the stream
// go after `timeout`, and release() says so: measure_cold then times with the launch latency
// included from there on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace kagent {

class LaunchHold {
 public:
  // A hold for the current device; nullptr with `why` set when the driver cannot wait on memory
  // (then the launch latency stays in the timing, as before).
  static std::unique_ptr<LaunchHold> make(std::chrono::milliseconds timeout, std::string& why);
  // Long enough for any issue of a call, short enough that a call waiting for its own stream
  // loses little.
  static constexpr std::chrono::milliseconds kDefaultTimeout{20};
  ~LaunchHold();
  LaunchHold(const LaunchHold&) = delete;
  LaunchHold& operator=(const LaunchHold&) = delete;

  // Enqueues the wait on `stream` and arms the watchdog.
  void hold(cudaStream_t stream);
  // Lets the stream go. False when the watchdog had let it go first (the call outlasted the
  // timeout: it waited for the GPU, or its host work is that long).
  bool release();

 private:
  using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
  LaunchHold(std::chrono::milliseconds timeout, WaitValue32 wait, uint32_t* counter, CUdeviceptr device_counter);
  void watch();
  void publish(uint32_t value);  // the counter's new value, seen by the GPU

  std::chrono::milliseconds timeout_;
  WaitValue32 wait_;
  uint32_t* counter_;  // pinned, mapped
  CUdeviceptr device_counter_;
  uint32_t next_ = 0;  // the value the last hold waits for

  std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false, fired_ = false, stop_ = false;
  bool idle_ = false;  // the watchdog waits unarmed: hold() must wake it
  std::chrono::steady_clock::time_point deadline_;
  std::thread watchdog_;  // last: started once the members above exist
};

}  // namespace kagent
