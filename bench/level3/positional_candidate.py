#!/usr/bin/env python3
"""Writes the "before" candidate for level3/10_ResNet101: the same stand-in kernel as
resnet101_params.cu, but with the positional signature kagent asked for before the kagent::Params
convention (the input, then all 626 parameters and buffers one by one). Only a build from before
that convention accepts it; bench/level3/RESULTS.md says how it was run.

usage: positional_candidate.py PROBLEM OUT.cu
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "worker"))
import kagent_worker  # noqa: E402

spec = kagent_worker.Problem(sys.argv[1]).spec("meta")
args = ["torch::Tensor " + a["cpp_name"] for a in spec["inputs"] + spec["params"]]
with open(sys.argv[2], "w") as out:
    out.write("""#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void copy_kernel(const float* in, float* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

torch::Tensor forward(%s) {
  auto out = torch::empty_like(x);
  long n = x.numel();
  copy_kernel<<<(n + 255) / 256, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                                              out.data_ptr<float>(), n);
  return out;
}
""" % ",\n    ".join(args))
print(f"{sys.argv[2]}: forward with {len(args)} arguments")
