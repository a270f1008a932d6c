// L2 flush between timed iterations (as nvbench does), so that every iteration starts cold and
// a kernel cannot look fast by re-reading its inputs from L2.
//
// Unlike nvbench's memset, the flush *reads* a buffer of twice the L2 size: a write leaves up
// to an L2's worth of dirty lines, which the next kernel then pays to write back (on the H200
// about 30 MB of extra DRAM writes in every profiled kernel, and time in every timed one). A
// read pass evicts the same lines, writes back whatever was dirty during the flush itself, and
// leaves L2 full of clean lines the next kernel can drop for free.
#pragma once

#include <cstddef>

#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>

namespace kagent {

class L2Flush {
 public:
  // Allocates on the current device; a device that reports no L2 gets no buffer and
  // flush() does nothing.
  L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  L2Flush(L2Flush&& other) noexcept;
  L2Flush& operator=(L2Flush&& other) noexcept;

  // Enqueues the flush on `stream` (asynchronous; nullptr is the legacy default stream).
  void flush(cudaStream_t stream);
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  int device_ = -1;
  size_t bytes_ = 0;
  at::Tensor buffer_;  // int32, zero-filled once
  at::Tensor sink_;    // the reduction's one value, preallocated so a flush allocates nothing
};

}  // namespace kagent
