// A kernel that never finishes: every thread spins on a flag in device memory that nothing
// ever sets. The flag is read through a volatile pointer, so the compiler cannot drop the
// loop. The host returns at once; the evaluator hangs at its next synchronisation.
// Expected verdict: timeout (the watchdog kills the worker).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void spin_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                            const volatile int* never_set) {
  while (never_set[0] == 0) {
    __nanosleep(1000);
  }
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  at::Tensor flag = at::zeros({1}, xc.options().dtype(at::kInt));
  const int64_t n = xc.numel();
  const int threads = 256;
  const int64_t blocks = n > 0 ? (n + threads - 1) / threads : 1;
  spin_kernel<<<static_cast<unsigned>(blocks), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n, flag.data_ptr<int>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
