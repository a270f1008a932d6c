// KernelBench level1/35_GroupNorm_ (8 groups) and level1/34_InstanceNorm (one group per channel,
// no affine parameters) at their official size (112 x 64 x 512 x 512; 15.0 GB with the output):
// mean and biased variance of each (sample, group) in double, one block each, then
// (x - mean) / sqrt(var + 1e-5) times the channel's weight plus its bias. An honest kernel for
// bench/memory/shared_gpu.py; instance_norm.cu is the same with groups = channels.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <optional>

namespace {

constexpr int kThreads = 512;

// stats[2 * g] = mean, stats[2 * g + 1] = 1 / sqrt(var + eps) of group g (a contiguous span of `len`).
__global__ void group_stats(const float* __restrict__ x, int64_t len, float eps, float* __restrict__ stats) {
  const float* in = x + blockIdx.x * len;
  double s = 0, ss = 0;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    const double v = in[j];
    s += v;
    ss += v * v;
  }
  __shared__ double ps[kThreads], pss[kThreads];
  ps[threadIdx.x] = s;
  pss[threadIdx.x] = ss;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      ps[threadIdx.x] += ps[threadIdx.x + half];
      pss[threadIdx.x] += pss[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double mean = ps[0] / static_cast<double>(len);
    const double var = pss[0] / static_cast<double>(len) - mean * mean;
    stats[2 * blockIdx.x] = static_cast<float>(mean);
    stats[2 * blockIdx.x + 1] = static_cast<float>(1.0 / sqrt(var + eps));
  }
}

__global__ void apply(const float* __restrict__ x, float* __restrict__ y, int64_t n, int64_t plane, int64_t channels,
                      int64_t per_group, const float* __restrict__ stats, const float* __restrict__ weight,
                      const float* __restrict__ bias) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / plane) % channels, sample = i / (plane * channels);
    const int64_t g = sample * (channels / per_group) + c / per_group;
    float v = (x[i] - stats[2 * g]) * stats[2 * g + 1];
    if (weight) v = v * weight[c] + bias[c];
    y[i] = v;
  }
}

at::Tensor normalise_groups(const at::Tensor& x, int64_t groups, const std::optional<at::Tensor>& weight,
                      const std::optional<at::Tensor>& bias) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() >= 2, "x must be a float32 CUDA tensor (N, C, ...)");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  if (xc.numel() == 0) return y;
  const int64_t n = xc.size(0), channels = xc.size(1), plane = xc.numel() / (n * channels);
  TORCH_CHECK(channels % groups == 0, "channels must divide into the groups");
  const int64_t per_group = channels / groups;
  at::Tensor stats = at::empty({n * groups * 2}, xc.options());
  auto stream = at::cuda::getCurrentCUDAStream();
  group_stats<<<static_cast<unsigned>(n * groups), kThreads, 0, stream>>>(xc.data_ptr<float>(), per_group * plane,
                                                                          1e-5f, stats.data_ptr<float>());
  at::Tensor w = weight ? weight->contiguous() : at::Tensor(), b = bias ? bias->contiguous() : at::Tensor();
  const int blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
  apply<<<blocks, 256, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), plane, channels, per_group,
                                    stats.data_ptr<float>(), weight ? w.data_ptr<float>() : nullptr,
                                    bias ? b.data_ptr<float>() : nullptr);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

}  // namespace

at::Tensor forward(at::Tensor x, at::Tensor gn_weight, at::Tensor gn_bias) {
  return normalise_groups(x, /*groups=*/8, gn_weight, gn_bias);
}
