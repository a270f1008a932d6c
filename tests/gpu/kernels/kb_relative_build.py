"""Verdict case (problem tests/gpu/problems/small_gelu.py): an honest GELU kernel whose extension
is built in a folder relative to the working directory, as 2 of CUDA-L1's answers build theirs
(cuda_l1/answers/l1_p28.py: `os.makedirs(build_dir)`, then `load_inline(build_directory=build_dir)`;
l1_p24.py the same with "cuda_extensions"). KernelBench's harness: correct.
Expected: correct. The worker runs in its scratch folder, the one place its sandbox lets a
candidate write; when it ran in its caller's folder this was runtime_error sandbox_filesystem
("mkdir <the caller's folder>/cuda_extensions").
The extension is the same one as kb_gelu_correct.py (kagent builds it once; build_directory is
no part of its key).
"""
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

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

build_dir = "cuda_extensions"
os.makedirs(build_dir, exist_ok=True)

gelu = load_inline(
    name="kagent_test_kb_gelu",
    cpp_sources=gelu_cpp_source,
    cuda_sources=gelu_source,
    functions=["gelu_cuda"],
    verbose=False,
    extra_cflags=[""],
    extra_ldflags=[""],
    build_directory=build_dir,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gelu = gelu

    def forward(self, x):
        return self.gelu.gelu_cuda(x)
