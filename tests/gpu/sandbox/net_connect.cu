// Adversarial: the host code connects to a TCP listener on 127.0.0.1 (the test's, port in
// KAGENT_SANDBOX_TEST_PORT) and sends a byte, ignores every failure, then returns the right
// answer. Expected: runtime_error, reason sandbox_network; the listener sees no connection.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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
  if (const char* port = std::getenv("KAGENT_SANDBOX_TEST_PORT")) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) (void)!::write(s, "x", 1);
      ::close(s);
    }
  }
  return gelu_own_kernel(x);
}
