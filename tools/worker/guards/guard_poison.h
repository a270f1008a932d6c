// Guard leftover_memory's tool: poisoning the memory a candidate could find results in.
// PyTorch's caching allocator hands out freed blocks without clearing them, so an output that
// forward allocates but never writes (torch.empty, a no-op kernel) can hold a result computed
// earlier: the reference's, or the candidate's own from a previous call with the same inputs.
// Filling every free block (and the reference's outputs, once copied) with 0xFF bytes turns such
// an output into NaNs with a bit pattern no arithmetic produces (CUDA's NaN is 0x7FFFFFFF), so a
// failure can be told apart from an ordinary wrong result.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace kagent::worker {

struct PoisonStats {
  int64_t bytes = 0;
  int64_t blocks = 0;
};

// Every inactive block of the caching allocator on the current device, from its snapshot.
// Skipped: expandable segments (free parts may be unmapped) and private pools (CUDA graphs
// keep their intermediates there between replays). Synchronizes the device before and after.
// Throws std::runtime_error when the allocator has no snapshot (e.g. the cudaMallocAsync backend).
PoisonStats poison_free_memory();

// Fills the storages behind `tensors` with 0xFF (synchronously).
void poison_tensors(const std::vector<at::Tensor>& tensors);

// Elements of a floating tensor whose bits are exactly the poison pattern (all ones).
int64_t poisoned_elements(const at::Tensor& t);

}  // namespace kagent::worker
