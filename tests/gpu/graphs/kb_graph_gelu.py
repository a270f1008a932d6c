# Honest, KernelBench format, with a CUDA graph (tests/gpu/problems/small_gelu.py): a GELU
# kernel of its own (load_inline), captured with torch.cuda.graph once per input shape after a
# warm-up on a side stream, as PyTorch's documentation shows; each call copies the input into
# the static one, replays, and returns a copy of the static output. Expected correct; the
# worker left as it was found.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void gelu_kernel(const float* x, float* out, int64_t size) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx < size) {
        float v = x[idx];
        out[idx] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    }
}

void gelu_into(torch::Tensor x, torch::Tensor out) {
    int64_t size = x.numel();
    const int block = 256;
    gelu_kernel<<<(size + block - 1) / block, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), size);
}
"""

ext = load_inline(
    name="kagent_test_graph_gelu",
    cpp_sources="void gelu_into(torch::Tensor x, torch::Tensor out);",
    cuda_sources=source,
    functions=["gelu_into"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.graph = None
        self.static_in = None
        self.static_out = None

    def forward(self, x):
        x = x.contiguous()
        if self.graph is None or self.static_in.shape != x.shape:
            self.static_in = x.clone()
            self.static_out = torch.empty_like(x)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                ext.gelu_into(self.static_in, self.static_out)  # warm-up outside the capture
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                ext.gelu_into(self.static_in, self.static_out)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
