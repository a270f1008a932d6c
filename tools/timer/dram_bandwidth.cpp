#include "timer/dram_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <cuda_runtime_api.h>

#include "cuda/cuda_error.h"
#include "timer/cuda_event.h"

namespace kagent {

namespace {

// cudaMalloc'd memory, freed however the measurement ends.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) { KAGENT_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }
  ~DeviceBuffer() { (void)cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

}  // namespace

std::optional<double> measure_dram_gbps(int64_t total_memory_bytes) {
  const size_t bytes = static_cast<size_t>(std::min<int64_t>(int64_t{256} << 20, total_memory_bytes / 16)) / 4 * 4;
  if (bytes == 0) return std::nullopt;
  try {
    DeviceBuffer src(bytes), dst(bytes);
    cudaStream_t stream = nullptr;  // the legacy default stream: nothing else runs yet
    KAGENT_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));  // first use stays out
    CudaEvent start, end;
    float best_ms = std::numeric_limits<float>::infinity();
    for (int i = 0; i < 5; ++i) {
      start.record(stream);
      KAGENT_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
      end.record(stream);
      end.synchronize();
      best_ms = std::min(best_ms, end.elapsed_ms_since(start));
    }
    if (!(best_ms > 0) || !std::isfinite(best_ms)) return std::nullopt;
    return std::round(2.0 * static_cast<double>(bytes) / (best_ms * 1e6) * 10) / 10;
  } catch (const cuda::ContextLost&) {
    throw;
  } catch (const cuda::Error&) {
    return std::nullopt;
  }
}

}  // namespace kagent
