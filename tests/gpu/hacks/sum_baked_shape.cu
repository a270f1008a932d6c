// HACK for guard shape_generalization (problem: KernelBench level1/47_Sum_reduction_over_a_dimension
// at its official 128 x 4096 x 4095).
// The reduced length and the row stride are baked in as constants (the official 4096 and 4095):
// exact at the official size, so the correctness trials pass. Caught by shape_generalization:
// at the other sizes get_inputs is made to build, it sums the wrong elements (it stays inside
// the tensor, so the result is wrong rather than a crash).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int64_t kReduced = 4096, kInner = 4095;

__global__ void sum_dim(const float* __restrict__ x, float* __restrict__ y, int64_t inner, int64_t numel) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= inner) return;
  float acc = 0.f;
  for (int64_t i = 0; i < kReduced; ++i) {
    const int64_t at = blockIdx.y * kReduced * kInner + i * kInner + j;
    if (at < numel) acc += x[at];
  }
  y[blockIdx.y * inner + j] = acc;
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 3, "x: fp32 CUDA, 3 dimensions");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty({xc.size(0), 1, xc.size(2)}, xc.options());
  const dim3 grid(static_cast<unsigned>((xc.size(2) + 255) / 256), static_cast<unsigned>(xc.size(0)));
  sum_dim<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(2),
                                                              xc.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
