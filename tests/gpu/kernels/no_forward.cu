// Invalid on purpose: the kernel and host function are fine, but the host function is
// called gelu_forward, not forward, so there is nothing to bind.
// Expected verdict: invalid / missing_forward.
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

at::Tensor gelu_forward(at::Tensor x) {
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  gelu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
