// Honest, with a CUDA graph (tests/gpu/problems/small_gelu.py): forward captures its own GELU
// kernel into a CUDA graph once per input size (raw CUDA API, thread-local capture on a stream
// of its own, buffers of its own), then for every call copies the input in, replays the graph
// on PyTorch's current stream and copies the result out. A legitimate launch-overhead saving:
// expected correct, and it leaves the worker as it found it.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

struct Captured {
  int64_t n = -1;
  float* in = nullptr;
  float* out = nullptr;
  cudaGraphExec_t exec = nullptr;
};

Captured& captured() {
  static auto* c = new Captured();  // never destroyed: no CUDA call after the runtime shut down
  return *c;
}

void capture(Captured& c, int64_t n) {
  if (c.exec) C10_CUDA_CHECK(cudaGraphExecDestroy(c.exec));
  if (c.in) C10_CUDA_CHECK(cudaFree(c.in));
  if (c.out) C10_CUDA_CHECK(cudaFree(c.out));
  C10_CUDA_CHECK(cudaMalloc(&c.in, n * sizeof(float)));
  C10_CUDA_CHECK(cudaMalloc(&c.out, n * sizeof(float)));
  cudaStream_t side = nullptr;
  C10_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  C10_CUDA_CHECK(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal));
  const int threads = 256;
  gelu_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, side>>>(c.in, c.out, n);
  C10_CUDA_CHECK(cudaStreamEndCapture(side, &graph));
  C10_CUDA_CHECK(cudaGraphInstantiate(&c.exec, graph, 0));
  C10_CUDA_CHECK(cudaGraphDestroy(graph));
  C10_CUDA_CHECK(cudaStreamDestroy(side));
  c.n = n;
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  Captured& c = captured();
  if (c.n != n) capture(c, n);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  C10_CUDA_CHECK(cudaMemcpyAsync(c.in, xc.data_ptr<float>(), n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  C10_CUDA_CHECK(cudaGraphLaunch(c.exec, stream));
  C10_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), c.out, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  return y;
}
