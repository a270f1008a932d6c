// KernelBench level1/76_conv_standard_1D_dilated_strided__ at its official size (x 64 x 64 x
// 524280, weight 128 x 64 x 3, stride 3, dilation 4, no padding or bias; 14.3 GB with the
// output): one thread per (sample, output position) computes a tile of 16 output channels, the
// tile's weights in shared memory, fp32 accumulation. Stride and dilation are constants of the
// problem (get_init_inputs). An honest kernel for bench/memory/shared_gpu.py.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kStride = 3, kDilation = 4, kTile = 16, kThreads = 256;

__global__ void conv1d(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int64_t cin,
                       int64_t cout, int64_t k, int64_t len, int64_t out_len) {
  extern __shared__ float tile_w[];  // kTile x cin x k
  const int64_t oc0 = blockIdx.y * kTile;
  const int64_t sample = blockIdx.z;
  const int tile = static_cast<int>(cout - oc0 < kTile ? cout - oc0 : kTile);
  for (int64_t i = threadIdx.x; i < tile * cin * k; i += blockDim.x) tile_w[i] = w[oc0 * cin * k + i];
  __syncthreads();
  const int64_t pos = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (pos >= out_len) return;
  float acc[kTile] = {};
  const float* in = x + sample * cin * len + pos * kStride;
  for (int64_t c = 0; c < cin; ++c)
    for (int64_t j = 0; j < k; ++j) {
      const float v = in[c * len + j * kDilation];
      for (int o = 0; o < kTile; ++o)
        if (o < tile) acc[o] += v * tile_w[(o * cin + c) * k + j];
    }
  float* out = y + (sample * cout + oc0) * out_len + pos;
  for (int o = 0; o < tile; ++o) out[o * out_len] = acc[o];
}

}  // namespace

at::Tensor forward(at::Tensor x, at::Tensor conv1d_weight) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 3, "x must be a 3-D float32 CUDA tensor");
  at::Tensor xc = x.contiguous(), w = conv1d_weight.contiguous();
  const int64_t n = xc.size(0), cin = xc.size(1), len = xc.size(2), cout = w.size(0), k = w.size(2);
  TORCH_CHECK(w.size(1) == cin, "weight and input channels differ");
  const int64_t out_len = (len - kDilation * (k - 1) - 1) / kStride + 1;
  at::Tensor y = at::empty({n, cout, out_len}, xc.options());
  if (y.numel() == 0) return y;
  const dim3 grid(static_cast<unsigned>((out_len + kThreads - 1) / kThreads), static_cast<unsigned>((cout + kTile - 1) / kTile),
                  static_cast<unsigned>(n));
  const size_t shared = static_cast<size_t>(kTile * cin * k) * sizeof(float);
  conv1d<<<grid, kThreads, shared, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), w.data_ptr<float>(),
                                                                       y.data_ptr<float>(), cin, cout, k, len, out_len);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
