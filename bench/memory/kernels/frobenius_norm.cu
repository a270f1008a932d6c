// KernelBench level1/37_FrobeniusNorm_ at its official size (112 x 64 x 512 x 512; 15.0 GB with
// the output): x / ||x||_F. The sum of squares in double (each block's partial added atomically
// into one scalar), then every element divided by its root. An honest kernel for
// bench/memory/shared_gpu.py.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kThreads = 256;

__global__ void sum_squares(const float* __restrict__ x, int64_t n, double* __restrict__ total) {
  double s = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    s += static_cast<double>(x[i]) * x[i];
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}

__global__ void divide(const float* __restrict__ x, float* __restrict__ y, int64_t n, const double* __restrict__ total) {
  const float norm = static_cast<float>(sqrt(*total));
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i] / norm;
}

__global__ void clear(double* v) { *v = 0; }

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  at::Tensor total = at::empty({1}, xc.options().dtype(at::kDouble));
  auto stream = at::cuda::getCurrentCUDAStream();
  const int blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
  clear<<<1, 1, 0, stream>>>(total.data_ptr<double>());
  sum_squares<<<blocks, kThreads, 0, stream>>>(xc.data_ptr<float>(), n, total.data_ptr<double>());
  divide<<<blocks, kThreads, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n, total.data_ptr<double>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
