import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# KernelBench-format answer for level2/76_Gemm_Add_ReLU: relu(x @ W^T + bias), the tiled SGEMM
# of gemm_bias_relu_kb.py (same CUDA source) with the problem's own module layout (a Linear
# without bias, then a bias parameter). bench/eval/bench_kernelbench_format.py evaluates it
# with kagent and with KernelBench's harness.
cuda_source = r'''
// y = relu(x @ W^T + b) for x [M, K], W [N, K] (nn.Linear's layout), b [N]; float32.
// Classic shared-memory tiled SGEMM, no cuBLAS: a 256-thread block computes a 128x128 tile
// of y, each thread an 8x8 sub-tile held in registers; K advances 8 at a time through two
// shared-memory buffers (the next tile is fetched into registers while the current one is
// multiplied). Bias and ReLU are applied in the epilogue before the single store.
// Any M, N, K: rows/columns past the edge load zeros and are not stored. float4 loads
// when K % 4 == 0 and the pointers are 16-byte aligned, float4 stores when N % 4 == 0.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cstdint>

namespace {

constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 8;
constexpr int kThreads = 256;  // 16 x 16, each owns 8 rows x 8 columns of the tile
constexpr int kPad = 4;        // keeps transposed stores conflict-free and rows 16-byte aligned

template <bool kVecLoad>
__global__ void __launch_bounds__(kThreads, 2)
    linear_bias_relu_kernel(const float* __restrict__ X, const float* __restrict__ W,
                            const float* __restrict__ bias, float* __restrict__ Y, int M, int N,
                            int K, bool vec_store) {
  __shared__ __align__(16) float As[2][BK][BM + kPad];  // As[k][m] = X[m0 + m][k0 + k]
  __shared__ __align__(16) float Bs[2][BK][BN + kPad];  // Bs[k][n] = W[n0 + n][k0 + k]

  const int tid = threadIdx.x;
  const int tx = tid & 15;  // column group
  const int ty = tid >> 4;  // row group
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;

  // Global -> shared mapping: thread loads 4 consecutive k of one row of X and of W.
  const int lr = tid >> 1;        // 0..127, row within the tile
  const int lk = (tid & 1) * 4;   // 0 or 4, k offset within the BK slice
  const bool a_ok = (m0 + lr) < M;
  const bool b_ok = (n0 + lr) < N;
  const float* a_row = X + static_cast<int64_t>(a_ok ? m0 + lr : 0) * K;
  const float* b_row = W + static_cast<int64_t>(b_ok ? n0 + lr : 0) * K;

  float ra[4], rb[4];
  auto load_tile = [&](int k0) {
    const int k = k0 + lk;
    if (kVecLoad) {
      // K % 4 == 0 and k % 4 == 0: the four values are all inside or all outside.
      if (a_ok && k < K) {
        const float4 v = *reinterpret_cast<const float4*>(a_row + k);
        ra[0] = v.x; ra[1] = v.y; ra[2] = v.z; ra[3] = v.w;
      } else {
        ra[0] = ra[1] = ra[2] = ra[3] = 0.0f;
      }
      if (b_ok && k < K) {
        const float4 v = *reinterpret_cast<const float4*>(b_row + k);
        rb[0] = v.x; rb[1] = v.y; rb[2] = v.z; rb[3] = v.w;
      } else {
        rb[0] = rb[1] = rb[2] = rb[3] = 0.0f;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        ra[i] = (a_ok && k + i < K) ? a_row[k + i] : 0.0f;
        rb[i] = (b_ok && k + i < K) ? b_row[k + i] : 0.0f;
      }
    }
  };
  auto store_tile = [&](int buf) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      As[buf][lk + i][lr] = ra[i];
      Bs[buf][lk + i][lr] = rb[i];
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
    if (has_next) load_tile((kt + 1) * BK);  // global loads in flight during the math

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

    // The other buffer was last read in iteration kt-1, before the barrier that ended it.
    if (has_next) store_tile(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }

  // Epilogue: thread rows ty*4+{0..3} and 64+ty*4+{0..3}; columns tx*4+{0..3} and 64+tx*4+{0..3}.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (row >= M) continue;
    float* yrow = Y + static_cast<int64_t>(row) * N;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = n0 + h * 64 + tx * 4;
      float v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float bj = (col + j < N) ? bias[col + j] : 0.0f;
        const float t = acc[i][h * 4 + j] + bj;
        v[j] = t < 0.0f ? 0.0f : t;  // ReLU; NaN passes through as in torch.relu
      }
      if (vec_store && col + 3 < N) {
        *reinterpret_cast<float4*>(yrow + col) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < N) yrow[col + j] = v[j];
      }
    }
  }
}

}  // namespace

at::Tensor forward(at::Tensor x, at::Tensor linear_weight, at::Tensor linear_bias) {
  TORCH_CHECK(x.is_cuda() && linear_weight.is_cuda() && linear_bias.is_cuda(),
              "all tensors must be CUDA tensors");
  TORCH_CHECK(x.scalar_type() == at::kFloat && linear_weight.scalar_type() == at::kFloat &&
                  linear_bias.scalar_type() == at::kFloat,
              "all tensors must be float32");
  TORCH_CHECK(x.dim() == 2 && linear_weight.dim() == 2 && linear_bias.dim() == 1,
              "expected x [M, K], weight [N, K], bias [N]");
  TORCH_CHECK(x.size(1) == linear_weight.size(1), "x and weight disagree on K");
  TORCH_CHECK(linear_bias.size(0) == linear_weight.size(0), "bias and weight disagree on N");

  at::Tensor X = x.contiguous();
  at::Tensor Wt = linear_weight.contiguous();
  at::Tensor b = linear_bias.contiguous();
  const int64_t M = X.size(0), K = X.size(1), N = Wt.size(0);
  TORCH_CHECK(M < (1LL << 31) && N < (1LL << 31) && K < (1LL << 31), "sizes too large");
  at::Tensor Y = at::empty({M, N}, X.options());
  if (M == 0 || N == 0) return Y;

  const float* xp = X.data_ptr<float>();
  const float* wp = Wt.data_ptr<float>();
  float* yp = Y.data_ptr<float>();
  const bool vec_load = (K % 4 == 0) && (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                        (reinterpret_cast<uintptr_t>(wp) % 16 == 0);
  const bool vec_store = (N % 4 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0);

  const dim3 grid(static_cast<unsigned>((N + BN - 1) / BN), static_cast<unsigned>((M + BM - 1) / BM));
  TORCH_CHECK(grid.y <= 65535u, "M too large for this launch shape");
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (vec_load) {
    linear_bias_relu_kernel<true><<<grid, kThreads, 0, stream>>>(
        xp, wp, b.data_ptr<float>(), yp, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), vec_store);
  } else {
    linear_bias_relu_kernel<false><<<grid, kThreads, 0, stream>>>(
        xp, wp, b.data_ptr<float>(), yp, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), vec_store);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return Y;
}
'''

cpp_source = "at::Tensor forward(at::Tensor x, at::Tensor linear_weight, at::Tensor linear_bias);"

gemm_add_relu = load_inline(
    name="gemm_add_relu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return gemm_add_relu.forward(x, self.gemm.weight, self.bias)
