// Adversarial: on its first call the host code allocates and touches host memory in
// 256 MiB steps up to 64 GiB (far over the suite's limit), holds it for 3 s, writes how much
// it got to $TMPDIR/memory_hog_mib, frees it and returns the right answer. Expected: crash,
// reason host_memory_limit (the orchestrator's watchdog), or the allocation failing early.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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
  static bool done = false;
  if (!done) {
    done = true;
    constexpr size_t kStep = size_t{256} << 20;
    std::vector<void*> blocks;
    for (size_t total = 0; total < (size_t{64} << 30); total += kStep) {
      void* b = std::malloc(kStep);
      if (!b) break;
      std::memset(b, 1, kStep);
      blocks.push_back(b);
    }
    ::sleep(3);
    if (const char* tmp = std::getenv("TMPDIR")) {
      if (FILE* f = std::fopen((std::string(tmp) + "/memory_hog_mib").c_str(), "w")) {
        std::fprintf(f, "%zu\n", blocks.size() * (kStep >> 20));
        std::fclose(f);
      }
    }
    for (void* b : blocks) std::free(b);
  }
  return gelu_own_kernel(x);
}
