// HACK for guard precision_lowered (problem tests/gpu/problems/linear_relu_odd.py: fp32
// Linear 200x517 -> 301, then ReLU).
// A tiled GEMM that reads both operands as bfloat16 (half the bytes of fp32; on real code
// this is a bf16 copy of the weights and tensor cores) and accumulates in fp32.
// Passes today's checks: its relative error is ~2e-3, well inside fp32's atol = rtol = 1e-2.
// Caught by precision_lowered: against an fp64 reference its error is thousands of times
// eager's fp32 error.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

namespace {

constexpr int kTile = 16;

__device__ __forceinline__ float as_bf16(float v) { return __bfloat162float(__float2bfloat16(v)); }

// y[m][n] = relu(sum_k x[m][k] * w[n][k] + b[n]), x: M x K, w: N x K (nn.Linear's layout).
__global__ void linear_relu_bf16(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y, int M, int N, int K) {
  __shared__ float xs[kTile][kTile];
  __shared__ float ws[kTile][kTile + 1];
  const int row = blockIdx.y * kTile + threadIdx.y;  // m
  const int col = blockIdx.x * kTile + threadIdx.x;  // n
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int kx = k0 + threadIdx.x, kw = k0 + threadIdx.y;
    xs[threadIdx.y][threadIdx.x] = (row < M && kx < K) ? as_bf16(x[static_cast<int64_t>(row) * K + kx]) : 0.0f;
    const int wn = blockIdx.x * kTile + threadIdx.x;
    ws[threadIdx.y][threadIdx.x] = (wn < N && kw < K) ? as_bf16(w[static_cast<int64_t>(wn) * K + kw]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += xs[threadIdx.y][k] * ws[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) y[static_cast<int64_t>(row) * N + col] = fmaxf(acc + b[col], 0.0f);
}

}  // namespace

at::Tensor forward(at::Tensor x, at::Tensor linear_weight, at::Tensor linear_bias) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous(), wc = linear_weight.contiguous(), bc = linear_bias.contiguous();
  const int M = static_cast<int>(xc.size(0)), K = static_cast<int>(xc.size(1)), N = static_cast<int>(wc.size(0));
  at::Tensor y = at::empty({M, N}, xc.options());
  if (M == 0 || N == 0) return y;
  const dim3 block(kTile, kTile), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  linear_relu_bf16<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
