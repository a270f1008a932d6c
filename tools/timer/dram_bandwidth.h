// The achievable DRAM bandwidth of the current GPU: a device-to-device copy of buffers far
// larger than L2, read + write bytes over the best of a few copies, timed with CUDA events.
// The profile compares kernels' achieved bandwidth against it. A few ms, once per worker.
#pragma once

#include <cstdint>
#include <optional>

namespace kagent {

// nullopt when it cannot be measured (too little free memory, no device). The buffers are
// freed again before it returns: candidates get the whole GPU.
std::optional<double> measure_dram_gbps(int64_t total_memory_bytes);

}  // namespace kagent
