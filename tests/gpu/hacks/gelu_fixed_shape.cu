// HACK for guard shape_generalization (problem tests/gpu/problems/gelu_extra_shapes.py).
// The problem's size (512 x 1024, a multiple of the block size) is baked into the launch, so
// the kernel needs no bounds check and no size argument.
// Passes today's checks: every trial uses get_inputs()'s shape.
// Caught by shape_generalization: on the problem's extra (larger) input shapes only the first
// 512 x 1024 elements are written.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int64_t kRows = 512, kCols = 1024, kThreads = 256;
static_assert(kRows * kCols % kThreads == 0, "the launch covers the tensor exactly");

__global__ void gelu_fixed(const float* __restrict__ x, float* __restrict__ y) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const float v = x[i];
  y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
}

}  // namespace

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  TORCH_CHECK(x.numel() >= kRows * kCols, "x is smaller than the problem");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  gelu_fixed<<<static_cast<unsigned>(kRows * kCols / kThreads), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
