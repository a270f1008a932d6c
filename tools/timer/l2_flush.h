// L2 flush between timed iterations (as nvbench does): writing a buffer of twice the L2
// size evicts whatever the previous iteration left there, so every iteration starts cold
// and a kernel cannot look fast by re-reading its inputs from L2.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace kagent {

class L2Flush {
 public:
  // Allocates on the current device; a device that reports no L2 gets no buffer and
  // flush() does nothing.
  L2Flush();
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  L2Flush(L2Flush&& other) noexcept;
  L2Flush& operator=(L2Flush&& other) noexcept;

  // Enqueues the flush on `stream` (asynchronous).
  void flush(cudaStream_t stream);
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  void release() noexcept;
  int device_ = -1;
  size_t bytes_ = 0;
  void* buffer_ = nullptr;
};

}  // namespace kagent
