#include "worker/service/gpu_memory.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

namespace kagent::worker {

namespace {

bool initialised() { return c10::cuda::device_count() > 0 && c10::cuda::CUDACachingAllocator::get()->initialized(); }

const c10::CachingAllocator::Stat& allocated_stat(const c10::CachingDeviceAllocator::DeviceStats& s) {
  return s.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
}

}  // namespace

int64_t gpu_allocated_bytes() {
  if (!initialised()) return 0;
  return allocated_stat(c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device())).current;
}

int64_t gpu_peak_bytes() {
  if (!initialised()) return 0;
  return allocated_stat(c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device())).peak;
}

void reset_gpu_peak() {
  if (initialised()) c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device());
}

void release_cached_gpu_memory() {
  if (initialised()) c10::cuda::CUDACachingAllocator::emptyCache();
}

}  // namespace kagent::worker
