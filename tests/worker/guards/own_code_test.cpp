// Whether a KernelBench-format answer could launch a kernel of its own (worker/guards/own_code.h),
// on the shapes of source real answers have.
#include <doctest/doctest.h>

#include "worker/guards/own_code.h"

using kagent::worker::may_launch_own_kernels;

TEST_CASE("own code: an import of load_inline that is never called is no code of its own") {
  const std::string l3_p30 =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return self.proj(x).flatten(2)\n";
  CHECK_FALSE(may_launch_own_kernels(l3_p30, false));
  CHECK(may_launch_own_kernels(l3_p30, true));  // an extension built at load: judged as before
}

TEST_CASE("own code: every way to build a kernel counts, aliases and lazy builds included") {
  CHECK(may_launch_own_kernels("mod = load_inline(name='x', cpp_sources=s)", false));
  CHECK(may_launch_own_kernels("from torch.utils.cpp_extension import load_inline as li\nm = li(name='x')", false));
  CHECK(may_launch_own_kernels("from torch.utils import cpp_extension\nm = cpp_extension.load(name='x', sources=[])", false));
  CHECK(may_launch_own_kernels("from torch.utils.cpp_extension import load\n", false));
  CHECK(may_launch_own_kernels("import triton\nimport triton.language as tl\n@triton.jit\ndef k(x): pass", false));
  CHECK(may_launch_own_kernels("import cupy as cp\nk = cp.RawKernel(src, 'k')", false));
  CHECK(may_launch_own_kernels("fn = torch.cuda.jiterator._create_jit_fn(code)", false));
  CHECK(may_launch_own_kernels("lib = ctypes.CDLL('./k.so')", false));
  CHECK_FALSE(may_launch_own_kernels("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n", false));
}
