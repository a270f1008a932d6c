"""HACK for guard cudnn_benchmark (problem tests/gpu/problems/small_gelu.py): an honest GELU kernel
in a file that switches cuDNN's autotuning on at import, as 35 of CUDA-L1's 125 answers do
(`torch.backends.cudnn.benchmark = True`; 14 of them without TF32 or the matmul precision, and
KernelBench's harness judges such answers correct). It changes no precision, but it is process-wide: left on, the reference's
trials and the eager baseline run on whatever cuDNN's autotuning picks, and that baseline would
be cached for every later candidate.
Expected: rejected (cudnn_benchmark) under strict, whose rewards come from the candidate's own
kernels with no process-wide switch left to it; correct under kernelbench, with the switch put
back and noted. Before: rejected (torch_patched, "precision settings changed") under both.
The extension is the same one as tests/gpu/kernels/kb_gelu_correct.py (one build for all).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

torch.backends.cudnn.benchmark = True

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
    def __init__(self) -> None:
        super().__init__()
        self.gelu = gelu

    def forward(self, x):
        return self.gelu.gelu_cuda(x)
