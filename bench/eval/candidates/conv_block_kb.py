import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# KernelBench-format twin of examples/conv_block.cu: the same CUDA source, built with
# load_inline and called from ModelNew, so KernelBench's harness and kagent evaluate the
# same kernels. Keep cuda_source identical to examples/conv_block.cu.
cuda_source = r'''
// Fused Conv2d(3x3, stride 1, padding 1, bias) -> ReLU -> MaxPool2d(2) for NCHW float32.
// A 16x16 thread block produces a 16x16 tile of the pooled output for 8 output channels of
// one image. It stages a (2*16+2)^2 input tile, 4 input channels at a time, plus their
// weights in shared memory; each thread keeps the 4x4 input patch under its pooling window
// in registers and accumulates the 2x2 conv outputs of the window for 8 channels. The
// window's max is taken before bias and ReLU: relu(max(c) + b) == max(relu(c + b)) exactly,
// since both adding b and relu are monotone in float arithmetic. The conv output never
// touches memory. Pooling is floor mode (an odd last row/column is dropped), as nn.MaxPool2d(2).
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cstdint>

namespace {

constexpr int kTile = 16;             // pooled outputs per block edge
constexpr int kInT = 2 * kTile + 2;   // input tile edge: 2 conv outputs per pooled one, +2 halo
constexpr int kOcb = 8;               // output channels per block
constexpr int kIcc = 4;               // input channels per shared-memory chunk

__global__ void __launch_bounds__(kTile * kTile)
    conv3x3_relu_maxpool2_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ bias, float* __restrict__ y, int C,
                                 int H, int W, int OC, int PH, int PW, int oc_groups) {
  __shared__ float s_in[kIcc][kInT][kInT + 1];
  __shared__ float s_w[kOcb][kIcc][9];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTile + tx;
  const int n = blockIdx.z / oc_groups;
  const int oc0 = (blockIdx.z % oc_groups) * kOcb;
  const int py0 = blockIdx.y * kTile, px0 = blockIdx.x * kTile;
  const int iy0 = 2 * py0 - 1, ix0 = 2 * px0 - 1;  // input coords of s_in[.][0][0] (padding 1)

  float acc[kOcb][4];
#pragma unroll
  for (int o = 0; o < kOcb; ++o) acc[o][0] = acc[o][1] = acc[o][2] = acc[o][3] = 0.0f;

  const float* xn = x + static_cast<int64_t>(n) * C * H * W;
  for (int ic0 = 0; ic0 < C; ic0 += kIcc) {
    __syncthreads();  // the previous chunk has been read by everyone
    for (int idx = tid; idx < kIcc * kInT * kInT; idx += kTile * kTile) {
      const int c = idx / (kInT * kInT);
      const int rem = idx - c * (kInT * kInT);
      const int r = rem / kInT, q = rem - r * kInT;
      const int ic = ic0 + c, gy = iy0 + r, gx = ix0 + q;
      float v = 0.0f;
      if (ic < C && gy >= 0 && gy < H && gx >= 0 && gx < W)
        v = xn[(static_cast<int64_t>(ic) * H + gy) * W + gx];
      s_in[c][r][q] = v;
    }
    for (int idx = tid; idx < kOcb * kIcc * 9; idx += kTile * kTile) {
      const int o = idx / (kIcc * 9);
      const int rem = idx - o * (kIcc * 9);
      const int c = rem / 9, k = rem - c * 9;
      const int oc = oc0 + o, ic = ic0 + c;
      s_w[o][c][k] = (oc < OC && ic < C) ? w[(static_cast<int64_t>(oc) * C + ic) * 9 + k] : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int c = 0; c < kIcc; ++c) {
      if (ic0 + c >= C) break;  // block-uniform
      float p[4][4];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int q = 0; q < 4; ++q) p[r][q] = s_in[c][2 * ty + r][2 * tx + q];
#pragma unroll
      for (int o = 0; o < kOcb; ++o) {
#pragma unroll
        for (int ky = 0; ky < 3; ++ky)
#pragma unroll
          for (int kx = 0; kx < 3; ++kx) {
            const float wv = s_w[o][c][ky * 3 + kx];
            acc[o][0] = fmaf(wv, p[ky][kx], acc[o][0]);          // conv at (2py,   2px)
            acc[o][1] = fmaf(wv, p[ky][kx + 1], acc[o][1]);      // conv at (2py,   2px+1)
            acc[o][2] = fmaf(wv, p[ky + 1][kx], acc[o][2]);      // conv at (2py+1, 2px)
            acc[o][3] = fmaf(wv, p[ky + 1][kx + 1], acc[o][3]);  // conv at (2py+1, 2px+1)
          }
      }
    }
  }

  const int py = py0 + ty, px = px0 + tx;
  if (py < PH && px < PW) {
#pragma unroll
    for (int o = 0; o < kOcb; ++o) {
      const int oc = oc0 + o;
      if (oc < OC) {
        const float m = fmaxf(fmaxf(acc[o][0], acc[o][1]), fmaxf(acc[o][2], acc[o][3]));
        const float t = m + bias[oc];
        y[((static_cast<int64_t>(n) * OC + oc) * PH + py) * PW + px] = t < 0.0f ? 0.0f : t;
      }
    }
  }
}

}  // namespace

at::Tensor forward(at::Tensor x, at::Tensor conv_weight, at::Tensor conv_bias) {
  TORCH_CHECK(x.is_cuda() && conv_weight.is_cuda() && conv_bias.is_cuda(), "all tensors must be CUDA tensors");
  TORCH_CHECK(x.scalar_type() == at::kFloat && conv_weight.scalar_type() == at::kFloat &&
                  conv_bias.scalar_type() == at::kFloat,
              "all tensors must be float32");
  TORCH_CHECK(x.dim() == 4, "x must be NCHW");
  TORCH_CHECK(conv_weight.dim() == 4 && conv_weight.size(2) == 3 && conv_weight.size(3) == 3,
              "this kernel implements 3x3 convolutions only");
  TORCH_CHECK(conv_weight.size(1) == x.size(1), "weight and input disagree on channels");
  TORCH_CHECK(conv_bias.dim() == 1 && conv_bias.size(0) == conv_weight.size(0), "bias must be [out_channels]");

  at::Tensor xc = x.contiguous();
  at::Tensor wc = conv_weight.contiguous();
  at::Tensor bc = conv_bias.contiguous();
  const int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
  const int64_t OC = wc.size(0);
  const int64_t PH = H / 2, PW = W / 2;  // conv keeps H x W (3x3, padding 1); pool floors
  at::Tensor y = at::empty({N, OC, PH, PW}, xc.options());
  if (y.numel() == 0) return y;

  const int64_t oc_groups = (OC + kOcb - 1) / kOcb;
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>((PW + kTile - 1) / kTile), static_cast<unsigned>((PH + kTile - 1) / kTile),
                  static_cast<unsigned>(N * oc_groups));
  TORCH_CHECK(N * oc_groups <= 65535 && grid.y <= 65535u, "problem too large for this launch shape");
  TORCH_CHECK(C * H * W < (1LL << 31), "image too large");
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  conv3x3_relu_maxpool2_kernel<<<grid, block, 0, stream>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(),
      static_cast<int>(C), static_cast<int>(H), static_cast<int>(W), static_cast<int>(OC),
      static_cast<int>(PH), static_cast<int>(PW), static_cast<int>(oc_groups));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
'''

cpp_source = "at::Tensor forward(at::Tensor x, at::Tensor conv_weight, at::Tensor conv_bias);"

conv_block_ext = load_inline(
    name="kagent_kb_conv_block",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.ext = conv_block_ext

    def forward(self, x):
        return self.ext.forward(x, self.conv.weight, self.conv.bias)
