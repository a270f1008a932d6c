// Does not compile on purpose: an undeclared identifier and a float4 used as a float.
// Expected verdict: compile_error.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void gelu_kernel(const float4* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];                                     // error: float4 -> float
    y[i] = 0.5f * v * (1.0f + erff(v * kInvSqrt2));     // error: kInvSqrt2 undeclared
  }
}

at::Tensor forward(at::Tensor x) {
  at::Tensor y = at::empty_like(x);
  gelu_kernel<<<1, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const float4*>(x.data_ptr<float>()), y.data_ptr<float>(), x.numel());
  return y;
}
