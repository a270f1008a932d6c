// Illegal memory access on purpose: thread i writes y[2^34 + i * 1024 * 1024], i.e. 64 GiB
// plus i * 4 MiB past the start of the output: unmapped device memory for every thread.
// The launch succeeds; the fault surfaces at the next synchronisation as
// cudaErrorIllegalAddress (700), which poisons the CUDA context.
// Expected verdict: runtime_error / cuda_fatal (and a fresh worker afterwards).
// Seen on an H200 (driver 580): stores up to about 1 GiB past a small allocation fail
// instead with cudaErrorInvalidAddressSpace (717, "operation not supported on
// global/shared address space"), also sticky; from 64 GiB up to at least 4 TiB past, with 700.
// Hence the 64 GiB base, so that every faulting store reports 700.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void oob_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    // BUG: should be y[i]
    y[(static_cast<int64_t>(1) << 34) + i * 1024 * 1024] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  oob_kernel<<<static_cast<unsigned>(blocks), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
