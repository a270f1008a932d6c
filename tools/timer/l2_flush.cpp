#include "timer/l2_flush.h"

#include <utility>

#include <ATen/ops/amax.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "timer/cuda_check.h"

namespace kagent {

L2Flush::L2Flush() {
  KAGENT_CUDA_CHECK(cudaGetDevice(&device_));
  int l2 = 0;
  KAGENT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_));
  if (l2 <= 0) return;
  bytes_ = 2 * static_cast<size_t>(l2);
  const auto options = at::TensorOptions().dtype(at::kInt).device(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device_)));
  buffer_ = at::zeros({static_cast<int64_t>(bytes_ / sizeof(int32_t))}, options);
  sink_ = at::empty({}, options);
}

L2Flush::L2Flush(L2Flush&& other) noexcept
    : device_(other.device_),
      bytes_(std::exchange(other.bytes_, 0)),
      buffer_(std::move(other.buffer_)),
      sink_(std::move(other.sink_)) {}

L2Flush& L2Flush::operator=(L2Flush&& other) noexcept {
  if (this != &other) {
    device_ = other.device_;
    bytes_ = std::exchange(other.bytes_, 0);
    buffer_ = std::move(other.buffer_);
    sink_ = std::move(other.sink_);
  }
  return *this;
}

void L2Flush::flush(cudaStream_t stream) {
  if (!buffer_.defined()) return;
  const auto index = static_cast<c10::DeviceIndex>(device_);
  const c10::cuda::CUDAStream s =
      stream ? c10::cuda::getStreamFromExternal(stream, index) : c10::cuda::getDefaultCUDAStream(index);
  const c10::cuda::CUDAStreamGuard guard(s);
  // One reduction kernel reads every line of the buffer; its result is never used.
  at::amax_out(sink_, buffer_, at::IntArrayRef{}, false);
}

}  // namespace kagent
