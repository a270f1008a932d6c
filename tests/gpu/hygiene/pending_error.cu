// Hygiene culprit (a CUDA error left pending): forward computes the right answer, then launches
// a kernel with an impossible configuration (2048 threads a block) and never checks. The
// runtime keeps the error as its last one: kagent's next check, or the reference's, would
// report it. Expected: runtime_error (the candidate's: "CUDA error after forward: invalid
// configuration argument"); the next evaluation unaffected.
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

// The right answer, by its own kernel: only what it leaves behind should decide.
at::Tensor gelu_own_kernel(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int threads = 256;
  gelu_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}


__global__ void nothing() {}

at::Tensor forward(at::Tensor x) {
  at::Tensor y = gelu_own_kernel(x);
  nothing<<<1, 2048, 0, at::cuda::getCurrentCUDAStream()>>>();
  return y;
}
