// KernelBench level1/36_RMSNorm_ at its official size (112 x 64 x 512 x 512; 15.0 GB with the
// output): x / sqrt(mean(x^2 over the 64 features) + 1e-5), one thread per (batch, position),
// reading the features with the position's stride (neighbouring threads read neighbouring
// memory). eps is the problem's default. An honest kernel for bench/memory/shared_gpu.py.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

__global__ void rms_norm(const float* __restrict__ x, float* __restrict__ y, int64_t batch, int64_t features,
                         int64_t positions, float eps) {
  const int64_t total = batch * positions;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / positions, p = i % positions;
    const float* in = x + b * features * positions + p;
    float* out = y + b * features * positions + p;
    float s = 0.f;
    for (int64_t f = 0; f < features; ++f) s += in[f * positions] * in[f * positions];
    const float rms = sqrtf(s / static_cast<float>(features) + eps);
    for (int64_t f = 0; f < features; ++f) out[f * positions] = in[f * positions] / rms;
  }
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() >= 2, "x must be a float32 CUDA tensor (N, C, ...)");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  if (xc.numel() == 0) return y;
  const int64_t batch = xc.size(0), features = xc.size(1), positions = xc.numel() / (batch * features);
  const int blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
  rms_norm<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), batch,
                                                                  features, positions, 1e-5f);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
