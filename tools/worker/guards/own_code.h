// Whether a KernelBench-format answer has any code that could launch a kernel of its own.
// Its kernel guards have no list of its kernels' names (a native candidate's come from ptxas),
// so a kernel that no library pattern claims counts as the answer's. An answer that is the
// reference in PyTorch (l3_p30_gemini15flash imports load_inline and never calls it) then got
// cuDNN's unnamed kernels as "its own" and passed no_kernel. Where the answer built no
// extension and mentions no way to compile a kernel, no kernel can be its own.
#pragma once

#include <string>

namespace kagent::worker {

// False only when `built_extensions` is false and the source calls no kernel compiler: no
// load_inline / cpp_extension.load call (or an alias of one), no Triton, cupy, numba, jiterator,
// NVRTC, ctypes or similar. Anything doubtful counts as "may": the guards then judge as before.
bool may_launch_own_kernels(const std::string& source, bool built_extensions);

}  // namespace kagent::worker
