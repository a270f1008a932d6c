# An answer in the shape an RL policy writes (3 of CUDA-L1's 125 answers): the CUDA source is a
# constant, written to a temporary folder when the module loads, and built with
# torch.utils.cpp_extension.load; its own PYBIND11_MODULE binds the function.
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


def build():
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "scale_ext.cu")
    with open(path, "w") as f:
        f.write(cuda_source)
    return load(name="scale_ext", sources=[path], verbose=False, build_directory=folder)


scale_ext = build()


class ModelNew(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return scale_ext.scale(x, self.s)
