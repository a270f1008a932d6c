#include "worker/guards/guard_poison.h"

#include <stdexcept>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "cuda/cuda_error.h"
#include "worker/service/calls.h"

namespace kagent::worker {

namespace {
constexpr int kPoisonByte = 0xFF;
}  // namespace

PoisonStats poison_free_memory() {
  cuda::check(cudaDeviceSynchronize(), "synchronizing before poisoning free memory");
  int device = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  c10::cuda::CUDACachingAllocator::SnapshotInfo snap;
  try {
    snap = c10::cuda::CUDACachingAllocator::snapshot({0, 0}, /*include_traces=*/false);
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string("the CUDA allocator gives no snapshot: ") + e.what_without_backtrace());
  }
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
  PoisonStats stats;
  for (const auto& seg : snap.segments) {
    if (seg.device != device || seg.is_expandable) continue;
    if (seg.owner_private_pool_id.first != 0 || seg.owner_private_pool_id.second != 0) continue;
    size_t address = seg.address;  // blocks are listed in address order, back to back
    for (const auto& block : seg.blocks) {
      if (!block.allocated && !block.active && block.size > 0) {
        cuda::check(cudaMemsetAsync(reinterpret_cast<void*>(address), kPoisonByte, block.size, stream),
                   "cudaMemsetAsync (poisoning free memory)");
        stats.bytes += static_cast<int64_t>(block.size);
        ++stats.blocks;
      }
      address += block.size;
    }
  }
  cuda::check(cudaDeviceSynchronize(), "synchronizing after poisoning free memory");
  return stats;
}

void poison_tensors(const std::vector<at::Tensor>& tensors) {
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  for (const auto& t : tensors) {
    if (!t.defined() || !t.is_cuda() || !t.has_storage() || t.storage().nbytes() == 0) continue;
    cuda::check(cudaMemsetAsync(t.storage().mutable_data(), kPoisonByte, t.storage().nbytes(), stream),
               "cudaMemsetAsync (poisoning reference outputs)");
  }
  cuda::check(cudaStreamSynchronize(stream), "synchronizing after poisoning reference outputs");
}

int64_t poisoned_elements(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return 0;
  at::ScalarType bits;
  switch (t.element_size()) {
    case 2: bits = at::kShort; break;
    case 4: bits = at::kInt; break;
    case 8: bits = at::kLong; break;
    default: return 0;
  }
  if (!t.is_floating_point()) return 0;
  return t.contiguous().view(bits).eq(-1).sum().item<int64_t>();
}

}  // namespace kagent::worker
