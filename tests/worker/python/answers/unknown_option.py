# load_inline with an option torch does not know (extra_cuda_flags for extra_cuda_cflags).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = "torch::Tensor ident(torch::Tensor x) { return x.clone(); }"
ext = load_inline(name="typo_ext", cpp_sources=src, functions=["ident"], extra_cuda_flags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.ident(x)
