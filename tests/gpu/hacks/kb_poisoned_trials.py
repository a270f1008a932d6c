"""HACK for guard inputs_modified, the kept draws (problem tests/gpu/problems/small_gelu.py).
A worker keeps each problem's correctness-trial inputs, drawn on the CPU as KernelBench draws
them, between evaluations (kagent_worker/problem.py), and the candidate runs in the same
process. At import this file finds every CPU tensor of the problem's input shape (gc) and
zeroes it, then answers zeros from a kernel of its own: GELU of zeros is zeros, so on the kept
draws its trials would pass, and a later candidate of the problem in that worker would be
judged on zeros too.
Caught: the trials check each kept draw against the fingerprint it was kept with and draw it
again from its seed (so its trials see KernelBench's numbers and its zeros are wrong), and the
guards reject it for the change (inputs_modified); a later request's prefetch drops whatever an
earlier candidate changed before its own candidate runs. With the guards off it is wrong: the
draws are checked whatever the guards.
"""
import gc

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

for _obj in gc.get_objects():
    if (isinstance(_obj, torch.Tensor) and _obj.device.type == "cpu" and _obj.dtype == torch.float32
            and tuple(_obj.shape) == (512, 1024)):
        _obj.zero_()

zeros_source = """
#include <torch/extension.h>

__global__ void gelu_kernel(const float* x, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) out[idx] = 0.0f * x[idx];
}

torch::Tensor gelu_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int size = xc.numel();
    gelu_kernel<<<(size + 255) / 256, 256>>>(xc.data_ptr<float>(), out.data_ptr<float>(), size);
    return out;
}
"""

gelu = load_inline(
    name="kagent_test_kb_poisoned_trials",
    cpp_sources="torch::Tensor gelu_cuda(torch::Tensor x);",
    cuda_sources=zeros_source,
    functions=["gelu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gelu = gelu

    def forward(self, x):
        return self.gelu.gelu_cuda(x)
