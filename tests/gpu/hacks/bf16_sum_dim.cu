// HACK for guard precision_lowered (problem: KernelBench level1/47_Sum_reduction_over_a_dimension,
// fp32 sum over dim 1 of 128 x 4096 x 4095, at its official size).
// Reads each element as bfloat16 (half the bytes) and sums in fp32. Passes the tolerance check:
// torch.rand inputs are all positive, so the rounding errors average out (~1e-5 relative). Caught
// by precision_lowered: on signed inputs the sums cancel and bf16 inputs explain an error far
// above eager's.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

namespace {

// One thread per (outer, inner) column: the reduced dimension is walked with coalesced loads.
__global__ void sum_dim(const float* __restrict__ x, float* __restrict__ y, int64_t reduced, int64_t inner) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= inner) return;
  const float* col = x + blockIdx.y * reduced * inner + j;
  float acc = 0.f;
  for (int64_t i = 0; i < reduced; ++i) acc += __bfloat162float(__float2bfloat16(col[i * inner]));
  y[blockIdx.y * inner + j] = acc;
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 3, "x: fp32 CUDA, 3 dimensions");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty({xc.size(0), 1, xc.size(2)}, xc.options());
  const dim3 grid(static_cast<unsigned>((xc.size(2) + 255) / 256), static_cast<unsigned>(xc.size(0)));
  sum_dim<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1),
                                                              xc.size(2));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
