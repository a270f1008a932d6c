// RAII cudaEvent_t with timing enabled.
#pragma once

#include <cuda_runtime_api.h>

namespace kagent {

class CudaEvent {
 public:
  explicit CudaEvent(unsigned flags = cudaEventDefault);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;

  void record(cudaStream_t stream);
  void synchronize() const;
  // Milliseconds from `start` to this event; both must have completed.
  float elapsed_ms_since(const CudaEvent& start) const;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace kagent
