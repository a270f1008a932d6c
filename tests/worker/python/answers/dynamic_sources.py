# Sources that cannot be read without running the file (built by a function at import),
# an extension binding itself with PYBIND11_MODULE (no functions=; kagent reads it), and
# **kwargs.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


def make_source(op):
    return f"torch::Tensor apply(torch::Tensor x) {{ return x.{op}(); }}"


dyn = load_inline(name="dyn_ext", cpp_sources=make_source("relu"), functions=["apply"])
own = load_inline(name="own_bind", cpp_sources="""
torch::Tensor twice(torch::Tensor x) { return x * 2; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice); }
""")
opts = {"name": "kw_ext", "cpp_sources": "torch::Tensor one(torch::Tensor x) { return x; }", "functions": ["one"]}
kw = load_inline(**opts)


class ModelNew(nn.Module):
    def forward(self, x):
        return own.twice(dyn.apply(x))
