// Hygiene culprit (a CUDA fault that surfaces in kagent's own step): the first call returns the
// right answer and starts a thread that, 200 ms later, launches a kernel writing through a
// null pointer. The fault lands while kagent compares, makes inputs or runs the reference.
// Expected: runtime_error / cuda_fatal (the candidate's, never evaluator_error); the worker is
// replaced; the next evaluation unaffected.
#include <chrono>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

// The right answer, by its own kernel: only what it leaves behind should decide.
at::Tensor gelu_own_kernel(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int threads = 256;
  gelu_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}


__global__ void write_null(float* p) { p[threadIdx.x] = 1.0f; }

at::Tensor forward(at::Tensor x) {
  static bool armed = false;
  if (!armed) {
    armed = true;
    const int device = x.get_device();
    std::thread([device] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      cudaSetDevice(device);
      cudaStream_t s = nullptr;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      write_null<<<1, 32, 0, s>>>(nullptr);
    }).detach();
  }
  return gelu_own_kernel(x);
}
