import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# KernelBench-format answer for level1/1_Square_matrix_multiplication_: C = A @ B, float32,
# a shared-memory tiled SGEMM (no cuBLAS) in the style of gemm_bias_relu_kb.py: 128x128 tiles
# of C per 256-thread block, an 8x8 register tile per thread, K advancing 8 at a time through
# two shared-memory buffers. bench/eval/bench_kernelbench_format.py evaluates it with kagent
# and with KernelBench's harness.
cuda_source = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cstdint>

namespace {

constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 8;
constexpr int kThreads = 256;
constexpr int kPad = 4;

template <bool kVec>
__global__ void __launch_bounds__(kThreads, 2)
    sgemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[2][BK][BM + kPad];  // As[k][m] = A[m0 + m][k0 + k]
  __shared__ __align__(16) float Bs[2][BK][BN + kPad];  // Bs[k][n] = B[k0 + k][n0 + n]

  const int tid = threadIdx.x;
  const int tx = tid & 15;
  const int ty = tid >> 4;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;

  // A: each thread loads 4 consecutive k of one row; B: 4 consecutive n of one k row.
  const int ar = tid >> 1, ak = (tid & 1) * 4;
  const int bk = tid >> 5, bn = (tid & 31) * 4;
  const bool a_ok = (m0 + ar) < M;
  const float* a_row = A + static_cast<int64_t>(a_ok ? m0 + ar : 0) * K;

  float ra[4], rb[4];
  auto load_tile = [&](int k0) {
    const int k = k0 + ak;
    const int kb = k0 + bk;
    const float* b_row = B + static_cast<int64_t>(kb < K ? kb : 0) * N + n0 + bn;
    if (kVec) {
      if (a_ok && k < K) {
        const float4 v = *reinterpret_cast<const float4*>(a_row + k);
        ra[0] = v.x; ra[1] = v.y; ra[2] = v.z; ra[3] = v.w;
      } else {
        ra[0] = ra[1] = ra[2] = ra[3] = 0.0f;
      }
      if (kb < K && n0 + bn < N) {
        const float4 v = *reinterpret_cast<const float4*>(b_row);
        rb[0] = v.x; rb[1] = v.y; rb[2] = v.z; rb[3] = v.w;
      } else {
        rb[0] = rb[1] = rb[2] = rb[3] = 0.0f;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        ra[i] = (a_ok && k + i < K) ? a_row[k + i] : 0.0f;
        rb[i] = (kb < K && n0 + bn + i < N) ? b_row[i] : 0.0f;
      }
    }
  };
  auto store_tile = [&](int buf) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      As[buf][ak + i][ar] = ra[i];
      Bs[buf][bk][bn + i] = rb[i];
    }
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int ktiles = (K + BK - 1) / BK;
  load_tile(0);
  store_tile(0);
  __syncthreads();

  int buf = 0;
  for (int kt = 0; kt < ktiles; ++kt) {
    const bool has_next = kt + 1 < ktiles;
    if (has_next) load_tile((kt + 1) * BK);

#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][kk][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][kk][64 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][kk][64 + tx * 4]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (has_next) store_tile(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (row >= M) continue;
    float* crow = C + static_cast<int64_t>(row) * N;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = n0 + h * 64 + tx * 4;
      if (kVec && col + 3 < N) {
        *reinterpret_cast<float4*>(crow + col) =
            make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < N) crow[col + j] = acc[i][h * 4 + j];
      }
    }
  }
}

}  // namespace

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda(), "A and B must be CUDA tensors");
  TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "A and B must be float32");
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "expected A [M, K] and B [K, N]");
  torch::Tensor A = a.contiguous(), B = b.contiguous();
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  TORCH_CHECK(M < (1LL << 31) && N < (1LL << 31) && K < (1LL << 31), "sizes too large");
  torch::Tensor C = torch::empty({M, N}, A.options());
  if (M == 0 || N == 0) return C;
  if (K == 0) return C.zero_();
  const float* ap = A.data_ptr<float>();
  const float* bp = B.data_ptr<float>();
  float* cp = C.data_ptr<float>();
  const bool vec = K % 4 == 0 && N % 4 == 0 && reinterpret_cast<uintptr_t>(ap) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(bp) % 16 == 0 && reinterpret_cast<uintptr_t>(cp) % 16 == 0;
  const dim3 grid(static_cast<unsigned>((N + BN - 1) / BN), static_cast<unsigned>((M + BM - 1) / BM));
  TORCH_CHECK(grid.y <= 65535u, "M too large for this launch shape");
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (vec) {
    sgemm_kernel<true><<<grid, kThreads, 0, stream>>>(ap, bp, cp, (int)M, (int)N, (int)K);
  } else {
    sgemm_kernel<false><<<grid, kThreads, 0, stream>>>(ap, bp, cp, (int)M, (int)N, (int)K);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return C;
}
'''

cpp_source = "torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);"

square_matmul = load_inline(
    name="square_matmul",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return square_matmul.matmul_cuda(A, B)
