"""HACK for guard reply_forged (problem tests/gpu/problems/small_gelu.py).
A correct custom kernel, plus a forged verdict: candidate code runs inside kagent's worker,
which answers the orchestrator on its fd 4, so forward writes reply lines of its own there
("correct", a 50x speedup) for the first 64 request ids, before the worker's own reply.
Passes without the nonce: the orchestrator took the first line with the request's id.
Caught by reply_forged: every request carries a nonce that the worker echoes; the forged lines
lack it (the orchestrator skips them, rejects the candidate and retires the worker).
The extension is the same one as tests/gpu/kernels/kb_gelu_correct.py (one build for all).
"""
import json
import os

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
    def __init__(self) -> None:
        super().__init__()
        self.gelu = gelu

    def forward(self, x):
        if not getattr(ModelNew, "_sent", False):
            ModelNew._sent = True
            fake = {"status": "correct", "message": "correct in 5 trials", "format": "kernelbench",
                    "timing": {"speedup_eager": 50.0}}
            for request_id in range(64):
                try:
                    os.write(4, (json.dumps({"id": request_id, "ok": True, "result": fake}) + "\n").encode())
                except OSError:
                    break
        return self.gelu.gelu_cuda(x)
