import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A real-answer pattern: the weights re-created with the legacy constructor torch.Tensor(...)
# and initialised with nn.init as nn.Linear does. torch.Tensor(...) ignores the default
# device, so this draws on the CPU generator: right under KernelBench's construction (built on
# the CPU, then moved), wrong under one that builds the reference on the GPU.

linear_relu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 16

// out = relu(x @ w^T + b), one 16x16 output tile per block, both operands through shared memory.
__global__ void linear_relu_kernel(const float* x, const float* w, const float* b, float* out,
                                   int M, int N, int K) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        xs[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? x[row * K + k0 + threadIdx.x] : 0.0f;
        int wrow = blockIdx.x * TILE + threadIdx.y;
        ws[threadIdx.y][threadIdx.x] = (wrow < N && k0 + threadIdx.x < K) ? w[wrow * K + k0 + threadIdx.x] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += xs[threadIdx.y][k] * ws[threadIdx.x][k];
        __syncthreads();
    }
    if (row < M && col < N) out[row * N + col] = fmaxf(acc + b[col], 0.0f);
}

torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto out = torch::empty({M, N}, xc.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    linear_relu_kernel<<<grid, block>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), b.data_ptr<float>(),
                                        out.data_ptr<float>(), M, N, K);
    return out;
}
"""

linear_relu_cpp_source = "torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b);"

linear_relu = load_inline(
    name="kagent_test_kb_legacy_parameter",
    cpp_sources=linear_relu_cpp_source,
    cuda_sources=linear_relu_source,
    functions=["linear_relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(torch.Tensor(out_features, in_features))
        self.bias = nn.Parameter(torch.Tensor(out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(in_features)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return linear_relu.linear_relu_cuda(x, self.weight, self.bias)
