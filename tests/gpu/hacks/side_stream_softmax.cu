// HACK for guard side_stream (problem examples/row_softmax.py: 2048 rows of 16384).
// A correct row softmax, launched on a non-blocking stream of its own "to overlap with the
// caller". The side stream waits for the caller's stream before reading x (so the values are
// always right), but forward returns without the caller's stream waiting for the side stream.
// Passes today's checks: the evaluator synchronizes the whole device before comparing, and
// the timer's end event on the legacy stream does not wait for a non-blocking stream, so the
// measured time is the launch alone.
// Caught by side_stream: outputs copied when forward returned and the caller's stream was done
// are still incomplete, and the kernel ends well after that moment (CUPTI).
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
  __syncthreads();  // partial[] may still be read from the previous reduction
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < kThreads / 32; ++w) v = is_max ? fmaxf(v, partial[w]) : v + partial[w];
  return v;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * cols;
  float m = -FLT_MAX;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce(m, true);
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) s += expf(xr[i] - m);
  s = block_reduce(s, false);
  const float inv = 1.0f / s;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) yr[i] = expf(xr[i] - m) * inv;
}

struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t inputs_ready = nullptr;
  SideStream() {
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    C10_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_ready, cudaEventDisableTiming));
  }
};

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 2, "x must be a 2-D float32 CUDA tensor");
  static auto* side = new SideStream();  // leaked on purpose: no destructor at process exit
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t rows = xc.size(0), cols = xc.size(1);
  if (rows == 0 || cols == 0) return y;
  // Wait for whatever produced x on the caller's stream ...
  C10_CUDA_CHECK(cudaEventRecord(side->inputs_ready, at::cuda::getCurrentCUDAStream()));
  C10_CUDA_CHECK(cudaStreamWaitEvent(side->stream, side->inputs_ready, 0));
  softmax_rows<<<static_cast<unsigned>(rows), kThreads, 0, side->stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(),
                                                                           cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;  // ... but never make the caller's stream wait for y.
}
