# An answer in the shape of CUDA-L1's l2_p75: CUDA source written into a .cpp file when the module
# loads, built with torch.utils.cpp_extension.load inside try/except. The host compiler refuses it
# (blockIdx is not C++), torch's build fails after its minute, and the answer falls back to torch's
# own ops. kagent's build fails the same way up front; the worker raises that error at the call.
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

cuda_source = """
#include <torch/extension.h>

__global__ void scale_kernel(const float* x, float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}

torch::Tensor scale_cuda(torch::Tensor x, double s) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)s, n);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("scale", &scale_cuda, "x * s");
}
"""

folder = tempfile.mkdtemp()
with open(os.path.join(folder, "scale_in_cpp.cpp"), "w") as f:
    f.write(cuda_source)

try:
    scale_ext = load(name="scale_in_cpp", sources=[os.path.join(folder, "scale_in_cpp.cpp")],
                     build_directory=folder, with_cuda=True)
    CUSTOM_KERNEL_AVAILABLE = True
except RuntimeError as e:  # torch's build error is a RuntimeError
    print(f"Warning: Could not load custom CUDA kernel: {e}")
    CUSTOM_KERNEL_AVAILABLE = False


class ModelNew(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        if CUSTOM_KERNEL_AVAILABLE:
            return scale_ext.scale(x, self.s)
        return x * self.s
