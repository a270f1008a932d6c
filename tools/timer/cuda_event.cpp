#include "timer/cuda_event.h"

#include <utility>

#include "cuda/cuda_error.h"

namespace kagent {

CudaEvent::CudaEvent(unsigned flags) { KAGENT_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags)); }

CudaEvent::~CudaEvent() {
  if (event_) (void)cudaEventDestroy(event_);  // destructors must not throw
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    if (event_) (void)cudaEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void CudaEvent::record(cudaStream_t stream) { KAGENT_CUDA_CHECK(cudaEventRecord(event_, stream)); }

void CudaEvent::synchronize() const { KAGENT_CUDA_CHECK(cudaEventSynchronize(event_)); }

float CudaEvent::elapsed_ms_since(const CudaEvent& start) const {
  float ms = 0;
  KAGENT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

}  // namespace kagent
