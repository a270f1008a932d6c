// HACK for guard leftover_memory (problem tests/gpu/problems/small_gelu.py).
// Computes only when its input differs from the previous call's (a 32-value fingerprint read
// back to the host); otherwise it allocates an output and launches nothing, relying on
// PyTorch's caching allocator to hand back the block its previous result was left in. To make
// that reliable it allocates from a stream of its own (the allocator keeps free blocks per
// stream, and no one else allocates there): the result is computed into a scratch block there,
// copied out, and the scratch block freed with the result still in it.
// Passes today's checks: each trial's "before" call computes; the "after" call (same inputs)
// gets the scratch block back, which holds exactly the result for those inputs.
// Caught by leftover_memory: free memory is poisoned before the guard's second call with the
// same inputs, and the unwritten output comes back as the poison pattern.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <array>
#include <vector>

namespace {

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

// Only ever current during allocations, never for work.
c10::cuda::CUDAStream allocation_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  return c10::cuda::getStreamFromExternal(stream, c10::cuda::current_device());
}

struct Fingerprint {
  std::vector<int64_t> sizes;
  std::array<float, 32> values{};
  bool same(const Fingerprint& o) const { return sizes == o.sizes && values == o.values; }
};

Fingerprint fingerprint(const at::Tensor& x) {
  Fingerprint f;
  f.sizes = x.sizes().vec();
  const int64_t n = x.numel(), k = std::min<int64_t>(16, n);
  const float* p = x.data_ptr<float>();
  C10_CUDA_CHECK(cudaMemcpy(f.values.data(), p, k * sizeof(float), cudaMemcpyDeviceToHost));
  C10_CUDA_CHECK(cudaMemcpy(f.values.data() + 16, p + (n - k), k * sizeof(float), cudaMemcpyDeviceToHost));
  return f;
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  if (n == 0) return at::empty_like(xc);
  static auto* last = new Fingerprint();  // leaked on purpose: no destructor at process exit
  Fingerprint now = fingerprint(xc);
  if (now.same(*last)) {
    c10::cuda::CUDAStreamGuard on_scratch(allocation_stream());
    return at::empty_like(xc);  // the block the last result was left in
  }
  *last = std::move(now);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  at::Tensor scratch;
  {
    c10::cuda::CUDAStreamGuard on_scratch(allocation_stream());
    scratch = at::empty_like(xc);
  }
  gelu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(xc.data_ptr<float>(),
                                                                          scratch.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  at::Tensor y = at::empty_like(xc);
  C10_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), scratch.data_ptr<float>(), n * sizeof(float),
                                 cudaMemcpyDeviceToDevice, stream));
  C10_CUDA_CHECK(cudaStreamSynchronize(stream));  // scratch is freed next, holding the result
  return y;
}
