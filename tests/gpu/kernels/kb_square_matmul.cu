// KernelBench level1/1_Square_matrix_multiplication_ (C = A @ B, N = 4096, fp32): a plain
// 32x32 shared-memory tiled SGEMM, each thread computing 4 outputs of a column. FP32 FMAs
// only (no tensor cores): its FLOP count is exactly 2 N^3, the roofline check's known answer.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerThread = 4;

__global__ void __launch_bounds__(kTile * kTile / kRowsPerThread)
    square_sgemm_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int tx = threadIdx.x;                  // column in the tile
  const int ty = threadIdx.y * kRowsPerThread; // first of this thread's rows
  const int row0 = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc[kRowsPerThread] = {0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < n; k0 += kTile) {
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int ar = row0 + r, ac = k0 + tx, br = k0 + ty + r;
      as[ty + r][tx] = (ar < n && ac < n) ? a[static_cast<int64_t>(ar) * n + ac] : 0.f;
      bs[ty + r][tx] = (br < n && col < n) ? b[static_cast<int64_t>(br) * n + col] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) {
      const float bv = bs[k][tx];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) acc[r] = fmaf(as[ty + r][k], bv, acc[r]);
    }
    __syncthreads();
  }
  for (int r = 0; r < kRowsPerThread; ++r)
    if (row0 + r < n && col < n) c[static_cast<int64_t>(row0 + r) * n + col] = acc[r];
}

}  // namespace

at::Tensor forward(at::Tensor A, at::Tensor B) {
  TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.scalar_type() == at::kFloat && B.scalar_type() == at::kFloat,
              "A and B must be float32 CUDA tensors");
  TORCH_CHECK(A.dim() == 2 && A.size(0) == A.size(1) && A.sizes() == B.sizes(), "A and B must be square, same size");
  at::Tensor a = A.contiguous(), b = B.contiguous();
  const int n = static_cast<int>(a.size(0));
  at::Tensor c = at::empty_like(a);
  const dim3 block(kTile, kTile / kRowsPerThread);
  const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  square_sgemm_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                                           c.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}
