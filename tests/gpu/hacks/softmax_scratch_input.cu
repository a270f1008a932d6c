// HACK for guard inputs_modified (problem tests/gpu/problems/softmax_odd.py).
// A row softmax that saves a buffer and a recomputation by storing exp(x - max) into its
// input x, then scaling those into the output.
// Passes today's checks: every run gets its own copy of the inputs, so the comparison never
// sees the damage; the output is right.
// Caught by inputs_modified: after the guard's call the input differs from an untouched copy.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cfloat>

namespace {

constexpr int kThreads = 256;

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float partial[kThreads / 32];
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < kThreads / 32; ++w) v = is_max ? fmaxf(v, partial[w]) : v + partial[w];
  return v;
}

__global__ void softmax_rows_in_input(float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  float* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * cols;
  float m = -FLT_MAX;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce(m, true);
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    const float e = expf(xr[i] - m);
    xr[i] = e;  // the input doubles as scratch space
    s += e;
  }
  s = block_reduce(s, false);
  const float inv = 1.0f / s;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) yr[i] = xr[i] * inv;
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 2, "x must be a 2-D float32 CUDA tensor");
  at::Tensor xc = x.contiguous();  // x itself when it is contiguous (it is)
  at::Tensor y = at::empty_like(xc);
  const int64_t rows = xc.size(0), cols = xc.size(1);
  if (rows == 0 || cols == 0) return y;
  softmax_rows_in_input<<<static_cast<unsigned>(rows), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
