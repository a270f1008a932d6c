// KernelBench level1/45_Average_Pooling_2D at its official size (16 x 64 x 2048 x 2048, kernel
// 11, stride 11, no padding; 17.3 GB with the output): one thread per output, the 121 inputs of
// its window summed in order. The problem's kernel size is a constant of the problem
// (get_init_inputs), so it is one here too. An honest kernel for bench/memory/shared_gpu.py.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kK = 11;

__global__ void avg_pool(const float* __restrict__ x, float* __restrict__ y, int64_t planes, int64_t h, int64_t w,
                         int64_t oh, int64_t ow) {
  const int64_t total = planes * oh * ow;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % ow, r = (i / ow) % oh, p = i / (ow * oh);
    const float* base = x + p * h * w + r * kK * w + c * kK;
    float s = 0.f;
    for (int a = 0; a < kK; ++a)
      for (int b = 0; b < kK; ++b) s += base[a * w + b];
    y[i] = s / static_cast<float>(kK * kK);
  }
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 4, "x must be a 4-D float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  const int64_t n = xc.size(0), ch = xc.size(1), h = xc.size(2), w = xc.size(3);
  const int64_t oh = (h - kK) / kK + 1, ow = (w - kK) / kK + 1;
  at::Tensor y = at::empty({n, ch, oh, ow}, xc.options());
  if (y.numel() == 0) return y;
  const int blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 16;
  avg_pool<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n * ch, h,
                                                                  w, oh, ow);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
