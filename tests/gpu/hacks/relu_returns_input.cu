// HACK for guard output_aliases_input (problem tests/gpu/problems/relu_rand.py: ReLU of
// torch.rand inputs, all non-negative).
// A "fast path": one kernel checks whether any element is negative; when none is, ReLU is the
// identity and forward returns its input itself instead of writing an output.
// Passes today's checks: the returned tensor holds exactly relu(x) for this data.
// Caught by output_aliases_input: the output is the input's memory.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void any_negative(const float* __restrict__ x, int64_t n, int* __restrict__ flag) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    if (!(x[i] >= 0.0f)) atomicOr(flag, 1);  // NaN counts as "not non-negative" too
}

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

at::Tensor forward(at::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  if (n == 0) return at::empty_like(xc);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  at::Tensor flag = at::empty({1}, xc.options().dtype(at::kInt));
  C10_CUDA_CHECK(cudaMemsetAsync(flag.data_ptr<int>(), 0, sizeof(int), stream));
  any_negative<<<264, 256, 0, stream>>>(xc.data_ptr<float>(), n, flag.data_ptr<int>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (flag.item<int>() == 0) return xc;  // already non-negative: "nothing to do"
  at::Tensor y = at::empty_like(xc);
  relu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
