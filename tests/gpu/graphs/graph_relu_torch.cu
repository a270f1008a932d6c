// Honest, with a CUDA graph through PyTorch's own API (tests/gpu/problems/relu_rand.py):
// forward captures its own ReLU kernel with at::cuda::CUDAGraph on a pool stream, once per
// input size, into tensors it keeps; every call copies the input in, replays, and returns a
// copy of the result. The capture registers PyTorch's default CUDA generator with the graph,
// as every capture does. Expected correct; the worker left as it was found.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <memory>

namespace {

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

struct Captured {
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  at::Tensor in, out;
};

Captured& captured() {
  static auto* c = new Captured();  // never destroyed: no CUDA call after the runtime shut down
  return *c;
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  if (n == 0) return at::empty_like(xc);
  Captured& c = captured();
  if (!c.graph || c.in.sizes() != xc.sizes()) {
    c.graph.reset();
    c.in = at::empty_like(xc);
    c.out = at::empty_like(xc);
    at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
    side.synchronize();
    at::cuda::getCurrentCUDAStream().synchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    {
      c10::cuda::CUDAStreamGuard guard(side);
      graph->capture_begin();
      const int threads = 256;
      relu_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, side.stream()>>>(
          c.in.data_ptr<float>(), c.out.data_ptr<float>(), n);
      graph->capture_end();
    }
    c.graph = std::move(graph);
  }
  c.in.copy_(xc);
  c.graph->replay();
  return c.out.clone();
}
