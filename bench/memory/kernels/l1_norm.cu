// KernelBench level1/38_L1Norm_ at its official size (32768 x 65535; 17.2 GB with the output):
// x / mean(|x|) over each row, one block per row, the sum in double. An honest kernel for
// bench/memory/shared_gpu.py.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kThreads = 512;

// One block per row: the row's sum of term(x) reduced in double, then x / scale(sum, cols).
template <class Term, class Scale>
__global__ void normalise_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols, Term term,
                               Scale scale) {
  const float* row = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  double s = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += term(row[j]);
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float d = scale(partial[0], cols);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = row[j] / d;
}

template <class Term, class Scale>
at::Tensor run(const at::Tensor& x, Term term, Scale scale) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 2, "x must be a 2-D float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  if (xc.numel() == 0) return y;
  normalise_rows<<<static_cast<unsigned>(xc.size(0)), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1), term, scale);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

struct Abs {
  __device__ double operator()(float v) const { return fabs(static_cast<double>(v)); }
};
struct Square {
  __device__ double operator()(float v) const { return static_cast<double>(v) * v; }
};
struct Mean {
  __device__ float operator()(double s, int64_t n) const { return static_cast<float>(s / static_cast<double>(n)); }
};
struct Root {
  __device__ float operator()(double s, int64_t) const { return static_cast<float>(sqrt(s)); }
};

}  // namespace


at::Tensor forward(at::Tensor x) { return run(x, Abs{}, Mean{}); }
