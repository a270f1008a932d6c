// HACK for guard precision_lowered (problem: KernelBench level1/67_conv_standard_1D, fp32 Conv1d
// 64 -> 128 channels, kernel 3, over 32 x 131072 samples, at its official size).
// A direct convolution that rounds the input and the weights to bfloat16 as it loads them
// (half the bytes) and accumulates in fp32. Passes the tolerance check: with torch.rand inputs
// its relative error is ~1e-3, inside fp32's atol = rtol = 1e-2. Caught by precision_lowered:
// on signed inputs, bf16 inputs explain its error, far above eager's.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

namespace {

constexpr int kSamples = 256, kOut = 16, kIn = 16, kMaxTaps = 8;

__device__ __forceinline__ float operand(float v) { return __bfloat162float(__float2bfloat16(v)); }

// y[n][co][l] = sum_ci sum_t w[co][ci][t] * x[n][ci][l + t]; a block: kSamples outputs of kOut channels.
__global__ void conv1d(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int cin,
                       int cout, int len, int taps) {
  __shared__ float xs[kIn][kSamples + kMaxTaps];
  __shared__ float ws[kOut][kIn][kMaxTaps];
  const int out_len = len - taps + 1;
  const int l0 = blockIdx.x * kSamples, co0 = blockIdx.y * kOut, n = blockIdx.z;
  float acc[kOut] = {};
  for (int ci0 = 0; ci0 < cin; ci0 += kIn) {
    for (int i = threadIdx.x; i < kIn * (kSamples + taps - 1); i += blockDim.x) {
      const int ci = ci0 + i / (kSamples + taps - 1), l = l0 + i % (kSamples + taps - 1);
      xs[i / (kSamples + taps - 1)][i % (kSamples + taps - 1)] =
          ci < cin && l < len ? operand(x[(static_cast<int64_t>(n) * cin + ci) * len + l]) : 0.f;
    }
    for (int i = threadIdx.x; i < kOut * kIn * taps; i += blockDim.x) {
      const int co = co0 + i / (kIn * taps), ci = ci0 + (i / taps) % kIn, t = i % taps;
      ws[i / (kIn * taps)][(i / taps) % kIn][t] = co < cout && ci < cin ? operand(w[(static_cast<int64_t>(co) * cin + ci) * taps + t]) : 0.f;
    }
    __syncthreads();
    for (int ci = 0; ci < kIn; ++ci)
      for (int t = 0; t < taps; ++t) {
        const float v = xs[ci][threadIdx.x + t];
#pragma unroll
        for (int o = 0; o < kOut; ++o) acc[o] += ws[o][ci][t] * v;
      }
    __syncthreads();
  }
  const int l = l0 + threadIdx.x;
  if (l >= out_len) return;
  for (int o = 0; o < kOut && co0 + o < cout; ++o) y[(static_cast<int64_t>(n) * cout + co0 + o) * out_len + l] = acc[o];
}

}  // namespace

at::Tensor forward(at::Tensor x, at::Tensor conv1d_weight) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 3, "x: fp32 CUDA [batch, channels, length]");
  at::Tensor xc = x.contiguous(), wc = conv1d_weight.contiguous();
  const int batch = static_cast<int>(xc.size(0)), cin = static_cast<int>(xc.size(1)), len = static_cast<int>(xc.size(2));
  const int cout = static_cast<int>(wc.size(0)), taps = static_cast<int>(wc.size(2));
  TORCH_CHECK(taps <= kMaxTaps && taps <= len, "kernel size up to 8 and at most the length");
  at::Tensor y = at::empty({batch, cout, len - taps + 1}, xc.options());
  const dim3 grid((len - taps + 1 + kSamples - 1) / kSamples, (cout + kOut - 1) / kOut, batch);
  conv1d<<<grid, kSamples, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), wc.data_ptr<float>(),
                                                                  y.data_ptr<float>(), cin, cout, len, taps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
