#include "timer/l2_flush.h"

#include <utility>

#include "cuda/cuda_error.h"

namespace kagent {

L2Flush::L2Flush() {
  KAGENT_CUDA_CHECK(cudaGetDevice(&device_));
  int l2 = 0;
  KAGENT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_));
  if (l2 <= 0) return;
  bytes_ = 2 * static_cast<size_t>(l2);
  KAGENT_CUDA_CHECK(cudaMalloc(&buffer_, bytes_));
}

L2Flush::~L2Flush() { release(); }

void L2Flush::release() noexcept {
  if (buffer_) (void)cudaFree(buffer_);  // destructors must not throw
  buffer_ = nullptr;
  bytes_ = 0;
}

L2Flush::L2Flush(L2Flush&& other) noexcept
    : device_(other.device_), bytes_(std::exchange(other.bytes_, 0)), buffer_(std::exchange(other.buffer_, nullptr)) {}

L2Flush& L2Flush::operator=(L2Flush&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    bytes_ = std::exchange(other.bytes_, 0);
    buffer_ = std::exchange(other.buffer_, nullptr);
  }
  return *this;
}

void L2Flush::flush(cudaStream_t stream) {
  if (!buffer_) return;
  KAGENT_CUDA_CHECK(cudaMemsetAsync(buffer_, 0, bytes_, stream));
}

}  // namespace kagent
