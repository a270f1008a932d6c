// ReLU of any float32 tensor, grid-stride with float4 loads and stores where the data is
// 16-byte aligned (KernelBench level1/19_ReLU at its official 4096 x 393216: 6.4 GB in, 6.4 GB
// out). The native kernel of bench/memory's sweep.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cstdint>

namespace {

__global__ void relu4(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    y[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
  }
}

__global__ void relu1(const float* __restrict__ x, float* __restrict__ y, int64_t from, int64_t n) {
  for (int64_t i = from + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

}  // namespace

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "x must be a float32 CUDA tensor");
  torch::Tensor xc = x.contiguous();
  torch::Tensor y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  auto stream = at::cuda::getCurrentCUDAStream();
  const int blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
  const bool aligned = reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;
  const int64_t n4 = aligned ? n / 4 : 0;
  if (n4) relu4<<<blocks, 256, 0, stream>>>(reinterpret_cast<const float4*>(xc.data_ptr<float>()),
                                            reinterpret_cast<float4*>(y.data_ptr<float>()), n4);
  if (n4 * 4 < n) relu1<<<blocks, 256, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n4 * 4, n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
