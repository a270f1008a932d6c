// A 16x16x16 half-precision tile product with WMMA (tensor cores): the SASS test checks that
// its summary shows HMMA instructions. c = a @ b^T for a, b of shape [16, 16], fp16; c fp32.
#include <ATen/ATen.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

__global__ void wmma_tile_kernel(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

at::Tensor forward(at::Tensor a, at::Tensor b) {
  TORCH_CHECK(a.scalar_type() == at::kHalf && b.scalar_type() == at::kHalf, "a and b must be fp16");
  auto c = at::empty({16, 16}, a.options().dtype(at::kFloat));
  wmma_tile_kernel<<<1, 32>>>(reinterpret_cast<const half*>(a.data_ptr<at::Half>()),
                              reinterpret_cast<const half*>(b.data_ptr<at::Half>()), c.data_ptr<float>());
  return c;
}
