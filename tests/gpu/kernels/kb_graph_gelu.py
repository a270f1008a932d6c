import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A real-answer pattern (about 40 of CUDA-L1's 249 H100 answers): forward captures its work in a
# CUDA graph on the first call and replays it afterwards, copying each call's input into the
# graph's static input and returning a copy of its static output. Here the work is an own GELU
# kernel, so the answer is correct under both policies, and its timing includes the replay.
# The kernel is launched on the current stream, which is the capture stream inside
# torch.cuda.graph (a launch on the legacy default stream is not captured).
gelu_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
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

    // On the current stream: inside torch.cuda.graph that is the capture stream.
    gelu_kernel<<<num_blocks, block_size, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(),
                                                                                 out.data_ptr<float>(), size);

    return out;
}
"""

gelu_cpp_source = "torch::Tensor gelu_cuda(torch::Tensor x);"

gelu = load_inline(
    name="kagent_test_kb_graph_gelu",
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
        self.graph = None
        self.static_x = None
        self.static_out = None

    def forward(self, x):
        if self.graph is None or self.static_x.shape != x.shape:
            self.static_x = x.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm-up outside the capture, as torch's docs ask
                gelu.gelu_cuda(self.static_x)
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = gelu.gelu_cuda(self.static_x)
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
