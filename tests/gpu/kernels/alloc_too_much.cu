// Runtime error (candidate_oom): asks for a scratch buffer of 4 TB, more than any GPU has. The
// out-of-memory is the candidate's own, so the verdict blames it (runtime_error, reason
// candidate_oom) with a line saying how much it asked for, and the next evaluation runs normally.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752440f));
}

at::Tensor forward(at::Tensor x) {
  at::Tensor scratch = at::empty({int64_t{1} << 40}, x.options());  // 4 TB of float32
  at::Tensor y = at::empty_like(x);
  const int64_t n = x.numel();
  gelu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
