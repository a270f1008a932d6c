// Correct (control for fp16_square_gemm): the same register-tiled GEMM reading A and B as the
// fp32 they are, for KernelBench level1/1_Square_matrix_multiplication_ at 4096 x 4096. Its
// sums run in a different order than cuBLAS's, so its error differs from eager's: the
// precision guard must let that through.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kTile = 64, kDepth = 16, kThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each

__device__ __forceinline__ float operand(float v) { return v; }

__global__ void __launch_bounds__(kThreads) gemm(const float* __restrict__ A, const float* __restrict__ B,
                                                 float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kDepth][kTile + 1];  // As[k][m]
  __shared__ float Bs[kDepth][kTile];      // Bs[k][n]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int am = m0 + i / kDepth, ak = k0 + i % kDepth;
      As[i % kDepth][i / kDepth] = am < M && ak < K ? operand(A[static_cast<int64_t>(am) * K + ak]) : 0.f;
      const int bk = k0 + i / kTile, bn = n0 + i % kTile;
      Bs[i / kTile][i % kTile] = bk < K && bn < N ? operand(B[static_cast<int64_t>(bk) * N + bn]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kDepth; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i], b[i] = Bs[k][tx + 16 * i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < M && n < N) C[static_cast<int64_t>(m) * N + n] = acc[i][j];
    }
}

}  // namespace

at::Tensor forward(at::Tensor A, at::Tensor B) {
  TORCH_CHECK(A.is_cuda() && A.scalar_type() == at::kFloat && B.scalar_type() == at::kFloat, "fp32 CUDA inputs");
  at::Tensor a = A.contiguous(), b = B.contiguous();
  const int M = static_cast<int>(a.size(0)), K = static_cast<int>(a.size(1)), N = static_cast<int>(b.size(1));
  at::Tensor c = at::empty({M, N}, a.options());
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm<<<grid, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                                 c.data_ptr<float>(), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}
