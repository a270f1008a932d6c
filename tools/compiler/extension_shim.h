// kagent's light <torch/extension.h>. Candidates written for load_inline include the full
// header (the whole C++ frontend plus pybind11 and Python.h), which costs about twice what
// ATen alone does, and ATen.h itself declares every operator. A folder holding a shim
// comes first on the include path, so `#include <torch/extension.h>` (or <torch/torch.h>)
// gets the torch:: names kernels use, and a PYBIND11_MODULE block the model still writes
// compiles to nothing (kagent binds `forward` itself).
//
// Tiers, cheapest first; native_compiler moves to the next one only when the errors show
// the cheaper one lacked something (an ATen function, a Tensor operator, the frontend):
//   Lite: ATen/core/Tensor.h (Tensor and all its methods), Dispatch.h, common op headers;
//   ATen: ATen/ATen.h (every at:: function and operator);
//   Full: no shim, the real torch/extension.h (needs Python.h).
#pragma once

#include <string>
#include <string_view>

namespace kagent {

enum class ShimTier { Lite, ATen, Full };

std::string to_string(ShimTier tier);

// The header text for a tier (Lite or ATen); placed at <dir>/torch/extension.h and
// <dir>/torch/torch.h.
std::string extension_shim_text(ShimTier tier);

}  // namespace kagent
