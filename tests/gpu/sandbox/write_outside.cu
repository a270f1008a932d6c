// Adversarial: the host code writes a file outside its scratch folder (the path the test
// names in KAGENT_SANDBOX_TEST_FORBIDDEN and checks afterwards), ignores every failure, then
// returns the right answer. Expected: runtime_error, reason sandbox_filesystem; no file.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

// The right answer, computed by its own kernel: only the host-side misdeed should decide the verdict.
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

at::Tensor forward(at::Tensor x) {
  if (const char* path = std::getenv("KAGENT_SANDBOX_TEST_FORBIDDEN")) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, "forged\n", 7);
      ::close(fd);
    }
  }
  return gelu_own_kernel(x);
}
