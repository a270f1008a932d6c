// Adversarial: on its first call the host code tries to fork 500 processes that sleep
// forever, writes how many it got to $TMPDIR/fork_bomb_count (the test reads it from the
// scratch folder), then returns the right answer. Expected: runtime_error, reason
// sandbox_processes; far fewer than 500 started; none left afterwards.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

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
  static bool done = false;  // once: every later call would only meet the same refusals
  if (!done) {
    done = true;
    int started = 0;
    for (int i = 0; i < 500; ++i) {
      pid_t p = ::fork();
      if (p == 0) {
        for (;;) ::pause();
      }
      if (p > 0) ++started;
    }
    if (const char* tmp = std::getenv("TMPDIR")) {
      if (FILE* f = std::fopen((std::string(tmp) + "/fork_bomb_count").c_str(), "w")) {
        std::fprintf(f, "%d\n", started);
        std::fclose(f);
      }
    }
  }
  return gelu_own_kernel(x);
}
