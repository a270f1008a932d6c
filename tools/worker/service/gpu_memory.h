// GPU memory as torch's caching allocator counts it: the tensors of an evaluation (inputs,
// clones, outputs, the candidate's own torch allocations). Memory a candidate takes with
// cudaMalloc itself is not in these figures.
#pragma once

#include <cstdint>

namespace kagent::worker {

// 0 everywhere when CUDA is not initialised (no GPU).
int64_t gpu_allocated_bytes();
int64_t gpu_peak_bytes();      // since the last reset
void reset_gpu_peak();         // the peak restarts from what is allocated now
// Gives cached, unused blocks back to the driver (other processes and cudaMalloc see them).
void release_cached_gpu_memory();

}  // namespace kagent::worker
