// HACK for guard cached_results (problem tests/gpu/problems/small_gelu.py).
// Computes on its first 16 calls, then serves the last result it computed whenever the input
// has the same shape: the correctness trials (10 calls) and the guards' runs (2) all compute;
// the timer's repeated calls get the kept tensor back at no cost.
// Passes today's checks: every compared call computes; timing then measures a no-op.
// Caught by cached_results: after timing, the timed input tensors get fresh values in place
// and the kept result no longer matches.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int64_t kWarmCalls = 16;

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  static int64_t calls = 0;
  static auto* kept = new at::Tensor();  // leaked on purpose: no destructor at process exit
  if (++calls > kWarmCalls && kept->defined() && kept->sizes() == x.sizes()) return *kept;
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n > 0) {
    gelu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  *kept = y;
  return y;
}
