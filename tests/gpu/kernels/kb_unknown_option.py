import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# An answer calling load_inline with an option it does not take (extra_cuda_flags; torch's
# is extra_cuda_cflags): a compile_error (load_inline_option) with one line naming it,
# before anything is built.
cuda_source = """
__global__ void copy_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
torch::Tensor copy_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    copy_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

ext = load_inline(name="kagent_test_kb_typo", cpp_sources="torch::Tensor copy_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["copy_cuda"], extra_cuda_flags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.copy_cuda(x)
