"""HACK for guard unjoined_stream (problem tests/gpu/problems/small_gelu.py).
ModelNew runs its own GELU kernel on a side stream that never waits for the caller's stream, and
joins it only afterwards (so the output is ready when forward returns and side_stream sees
nothing), as 20 of CUDA-L1's 125 answers do. KernelBench's harness synchronises before every call
and always passes it; kagent's trials fail it only when it loses the race.
Caught by unjoined_stream: the inputs are still being copied on the caller's stream when forward
is called.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void gelu_kernel(const float* x, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        float v = x[idx];
        out[idx] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    }
}

torch::Tensor gelu_on_current_stream(torch::Tensor x) {
    auto xc = x.contiguous();
    auto size = xc.numel();
    auto out = torch::empty_like(xc);
    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;
    // The current stream: inside `with torch.cuda.stream(s)` that is the side stream.
    gelu_kernel<<<num_blocks, block_size, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), size);
    return out;
}
"""

gelu = load_inline(
    name="kagent_test_kb_gelu_side_stream",
    cpp_sources="torch::Tensor gelu_on_current_stream(torch::Tensor x);",
    cuda_sources=gelu_source,
    functions=["gelu_on_current_stream"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x):
        with torch.cuda.stream(self.stream):  # no wait_stream here: x may still be being written
            out = gelu.gelu_on_current_stream(x)
        torch.cuda.current_stream().wait_stream(self.stream)
        return out
