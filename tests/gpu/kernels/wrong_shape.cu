// Wrong on purpose: computes GELU correctly but only for the first rows-1 rows, and
// returns a tensor of shape (rows - 1, cols). Expected verdict: wrong / shape_mismatch.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.size(0) >= 2, "expects a 2-D input with at least 2 rows");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty({xc.size(0) - 1, xc.size(1)}, xc.options());  // BUG: one row short
  const int64_t n = y.numel();
  if (n > 0) {
    gelu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
