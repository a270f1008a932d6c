// Softmax over the last dimension of a 2-D float32 tensor, one thread block per row.
// Pass 1 keeps an online (max, sum of exp) pair per thread and merges the pairs across
// the block; pass 2 reads the row again (mostly from L2) and writes exp(x - max) / sum.
// float4 loads and stores when the row length is a multiple of 4 and the data 16-byte aligned.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cmath>
#include <cstdint>

namespace {

// Add one value to a running (max m, sum s of exp(v - m)) pair. !(v <= m) is also true
// for NaN, which then poisons s the way PyTorch's softmax returns NaN for the row.
__device__ __forceinline__ void online_add(float& m, float& s, float v) {
  if (!(v <= m)) {
    s = s * expf(m - v) + 1.0f;
    m = v;
  } else if (m != -INFINITY) {
    s += expf(v - m);
  }
}

// Merge pair (m2, s2) into (m, s).
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) {  // both empty
    s += s2;
    return;
  }
  s = s * expf(m - mn) + s2 * expf(m2 - mn);
  m = mn;
}

template <bool kVec>
__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t dim) {
  __shared__ float sh_m[32];
  __shared__ float sh_s[32];
  const int64_t row = blockIdx.x;
  const float* xr = x + row * dim;
  float* yr = y + row * dim;
  const int tid = threadIdx.x;
  const int nthreads = blockDim.x;

  float m = -INFINITY, s = 0.0f;
  if (kVec) {
    const int64_t dim4 = dim / 4;
    const float4* xr4 = reinterpret_cast<const float4*>(xr);
    for (int64_t i = tid; i < dim4; i += nthreads) {
      const float4 v = xr4[i];
      online_add(m, s, v.x);
      online_add(m, s, v.y);
      online_add(m, s, v.z);
      online_add(m, s, v.w);
    }
  } else {
    for (int64_t i = tid; i < dim; i += nthreads) online_add(m, s, xr[i]);
  }

  // Warp merge.
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
    online_merge(m, s, m2, s2);
  }
  const int warp = tid >> 5, lane = tid & 31;
  const int nwarps = (nthreads + 31) >> 5;
  if (lane == 0) {
    sh_m[warp] = m;
    sh_s[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < nwarps ? sh_m[lane] : -INFINITY;
    s = lane < nwarps ? sh_s[lane] : 0.0f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
      const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
      online_merge(m, s, m2, s2);
    }
    if (lane == 0) {
      sh_m[0] = m;
      sh_s[0] = s;
    }
  }
  __syncthreads();
  const float row_max = sh_m[0];
  const float inv_sum = 1.0f / sh_s[0];

  if (kVec) {
    const int64_t dim4 = dim / 4;
    const float4* xr4 = reinterpret_cast<const float4*>(xr);
    float4* yr4 = reinterpret_cast<float4*>(yr);
    for (int64_t i = tid; i < dim4; i += nthreads) {
      float4 v = xr4[i];
      v.x = expf(v.x - row_max) * inv_sum;
      v.y = expf(v.y - row_max) * inv_sum;
      v.z = expf(v.z - row_max) * inv_sum;
      v.w = expf(v.w - row_max) * inv_sum;
      yr4[i] = v;
    }
  } else {
    for (int64_t i = tid; i < dim; i += nthreads) yr[i] = expf(xr[i] - row_max) * inv_sum;
  }
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
  TORCH_CHECK(x.dim() == 2, "x must be 2-D (batch, dim)");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t rows = xc.size(0), dim = xc.size(1);
  if (rows == 0 || dim == 0) return y;
  TORCH_CHECK(rows <= 0x7fffffffLL, "too many rows");

  const float* xp = xc.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const bool vec = (dim % 4 == 0) && (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                   (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
  // Enough threads for about four floats each, a whole number of warps, at most 1024.
  const int64_t per_row = vec ? dim / 4 : dim;
  int threads = 32;
  while (threads < 1024 && threads < per_row) threads *= 2;

  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (vec) {
    softmax_rows_kernel<true><<<static_cast<unsigned>(rows), threads, 0, stream>>>(xp, yp, dim);
  } else {
    softmax_rows_kernel<false><<<static_cast<unsigned>(rows), threads, 0, stream>>>(xp, yp, dim);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
