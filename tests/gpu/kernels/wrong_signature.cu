// Invalid on purpose: the problem (Linear + ReLU) passes x, linear_weight and linear_bias,
// but this forward takes only x and linear_weight (the bias was forgotten).
// Expected verdict: invalid / signature_mismatch.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void linear_relu_naive(const float* __restrict__ x, const float* __restrict__ w,
                                  float* __restrict__ y, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y;
  if (row < M && col < N) {
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s += x[static_cast<int64_t>(row) * K + k] * w[static_cast<int64_t>(col) * K + k];
    y[static_cast<int64_t>(row) * N + col] = s > 0.0f ? s : 0.0f;
  }
}

at::Tensor forward(at::Tensor x, at::Tensor linear_weight) {
  at::Tensor X = x.contiguous(), Wt = linear_weight.contiguous();
  const int M = static_cast<int>(X.size(0)), K = static_cast<int>(X.size(1)), N = static_cast<int>(Wt.size(0));
  at::Tensor y = at::empty({M, N}, X.options());
  const dim3 grid((N + 127) / 128, M);
  linear_relu_naive<<<grid, 128, 0, at::cuda::getCurrentCUDAStream()>>>(
      X.data_ptr<float>(), Wt.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
