// Two kernels with known character for the profiler's GPU test and profiler_probe: a
// streaming elementwise kernel (memory-bound) and a register-tiled SGEMM (compute-bound).
// Host launchers only; no torch, so the probe runs without it.
#pragma once

#include <array>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace kagent_probe {

// What a launch used, from cudaFuncGetAttributes and the launch itself: what CUPTI must report.
struct LaunchInfo {
  const char* name;  // qualified kernel name
  std::array<int32_t, 3> grid{}, block{};
  int registers = 0;
  int64_t static_smem = 0;
  int64_t local_bytes = 0;
};

// y = a * x + b over n floats (n % 4 == 0, 16-byte aligned), one float4 per thread.
// One block that does nothing: what the range profiler counts for no work at all.
LaunchInfo launch_empty(cudaStream_t stream);
LaunchInfo launch_scale_bias(const float* x, float* y, int64_t n, float a, float b, cudaStream_t stream);

// C = A * B for row-major n x n matrices (n % 128 == 0): 128x128 block tiles, 8x8 per thread.
LaunchInfo launch_tiled_sgemm(const float* a, const float* b, float* c, int n, cudaStream_t stream);

}  // namespace kagent_probe
