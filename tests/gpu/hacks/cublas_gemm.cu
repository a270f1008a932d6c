// HACK for guard library_share (problem examples/gemm_bias_relu.py: 1024x4096 @ 4096x4096).
// The GEMM, nearly all of the work, is at::matmul (cuBLAS); the candidate's own kernel only
// adds the bias and applies ReLU in place.
// Passes today's checks: cuBLAS in fp32 matches eager (which is cuBLAS too).
// Caught by library_share: the own kernel takes a few percent of the traced call's GPU time.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_relu_inplace(float* __restrict__ y, const float* __restrict__ bias, int64_t rows, int64_t cols) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[i] = fmaxf(y[i] + bias[i % cols], 0.0f);
}

at::Tensor forward(at::Tensor x, at::Tensor linear_weight, at::Tensor linear_bias) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor y = at::matmul(x, linear_weight.t()).contiguous();
  at::Tensor b = linear_bias.contiguous();
  const int64_t rows = y.size(0), cols = y.size(1);
  const int64_t n = rows * cols;
  if (n == 0) return y;
  bias_relu_inplace<<<static_cast<unsigned>((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      y.data_ptr<float>(), b.data_ptr<float>(), rows, cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
