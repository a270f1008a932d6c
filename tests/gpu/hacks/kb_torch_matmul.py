"""HACK for guard library_share, with the static torch_ops_in_forward flag (problem
tests/gpu/problems/linear_gelu.py: Linear 1024 -> 1024 on 512 rows, then GELU).
The GEMM and the bias, nearly all of the work, are torch.matmul (cuBLAS) and a torch add; the
custom kernel only applies GELU.
Passes today's checks: cuBLAS in fp32 is what eager uses too.
Caught by library_share at run time (the custom kernel's share of GPU time is small); the
source scan flags torch.matmul in ModelNew.forward.
The extension is the same one as tests/gpu/kernels/kb_gelu_correct.py (one build for all).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Exact GELU as a custom CUDA kernel, in the form KernelBench-trained models emit.
gelu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void gelu_kernel(const float* x, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        float v = x[idx];
        out[idx] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    }
}

torch::Tensor gelu_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    auto size = xc.numel();
    auto out = torch::empty_like(xc);

    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;

    gelu_kernel<<<num_blocks, block_size>>>(xc.data_ptr<float>(), out.data_ptr<float>(), size);

    return out;
}
"""

gelu_cpp_source = "torch::Tensor gelu_cuda(torch::Tensor x);"

gelu = load_inline(
    name="kagent_test_kb_gelu",
    cpp_sources=gelu_cpp_source,
    cuda_sources=gelu_source,
    functions=["gelu_cuda"],
    verbose=False,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # holds the weights, same init as Model
        self.gelu = gelu

    def forward(self, x):
        y = torch.matmul(x, self.linear.weight.t()) + self.linear.bias
        return self.gelu.gelu_cuda(y)
