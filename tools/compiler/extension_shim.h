// kagent's light <torch/extension.h>. Candidates written for load_inline include the full
// header (the whole C++ frontend plus pybind11 and Python.h), which costs about twice what
// ATen alone does, and ATen.h itself declares every operator. A folder holding a shim
// comes first on the include path, so `#include <torch/extension.h>` (or <torch/torch.h>)
// gets the torch:: names kernels use, and a PYBIND11_MODULE block the model still writes
// compiles to nothing (kagent binds `forward` itself).
//
// Tiers, cheapest first; the compilers move to the next one only when the errors show
// the cheaper one lacked something (an ATen function, a Tensor operator, the frontend):
//   Micro: no torch header at all: at::Tensor and the little answers' CUDA code uses of it,
//         declared by kagent (compiler/micro/micro_tensor.h), each member calling a support
//         library built once against the real headers (compiler/micro_header.h). Only for
//         load_inline extensions on the shared binding whose files include no other torch
//         header; any failure moves on to Slim, whose outcome is then the answer's.
//   Slim: ATen/core/Tensor.h (Tensor and all its methods), Dispatch.h, TensorOptions.h and the
//         same common operators as Lite, each as torch's own inline functions over its
//         ATen/ops/<op>_ops.h declaration, without what every ATen/ops/<op>.h also pulls in
//         (Context.h, DeviceGuard.h, TensorUtils.h, Generator.h, ...): half of Lite's cost.
//         Any failure moves on to Lite (its errors are then Lite's, exactly as before Slim),
//         or to ATen where Lite would fail the same way (a Tensor operator, an ATen function
//         that is not a common one). A file that includes ATen's operator headers itself
//         (ATen/ATen.h, ...) starts at Lite: Slim's operators would be defined twice.
//   Lite: ATen/core/Tensor.h, Dispatch.h, common op headers;
//   ATen: ATen/ATen.h (every at:: function and operator);
//   Full: no shim, the real torch/extension.h (needs Python.h).
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kagent {

enum class ShimTier { Micro, Slim, Lite, ATen, Full };

// The micro tier's standard headers (micro/micro_tensor.h): Lean, the few it needs and answers
// take for granted; Full, all it included before (streams, <functional>, <memory>, containers),
// for an answer whose code names any of them (micro_needs_full_std). Each is a shim folder of its
// own, so the preprocessor prefixes and precompiled headers of one never serve the other.
enum class MicroStd { Lean, Full };

std::string to_string(ShimTier tier);

// The header text for a tier (Micro, Slim, Lite or ATen); placed at <dir>/torch/extension.h,
// <dir>/torch/torch.h and <dir>/torch/types.h.
std::string extension_shim_text(ShimTier tier);

// The heavy part of a tier's header: its #include lines alone (what a precompiled header of
// the tier holds; the rest of the shim refers to macros such as TORCH_EXTENSION_NAME).
std::string extension_shim_includes(ShimTier tier);

// Where the Slim tier's operators live, relative to the shim folder.
inline constexpr std::string_view kSlimOpsHeader = "kagent/slim_ops.h";
inline constexpr std::string_view kShimHeader = "kagent/light_extension.h";  // the shim's text; torch/*.h include it
// The torch headers a shim folder stands in for (each includes kShimHeader).
inline constexpr std::array<std::string_view, 3> kShimmedTorchHeaders = {"torch/extension.h", "torch/torch.h",
                                                                         "torch/types.h"};

// The Slim tier's operators from the torch headers under `torch_include`: for each common
// operator, the text of ATen/ops/<op>.h from its `#include <ATen/ops/<op>_ops.h>` on (torch's
// generated inline functions, unchanged) without the includes above it; a header not written in
// that generated form is included whole. nullopt when a header is missing (no Slim tier then).
std::optional<std::string> slim_ops_text(const std::filesystem::path& torch_include);

// Whether `op` is one of the common operators Slim and Lite carry (ATen/ops/<op>.h).
bool is_common_op(std::string_view op);

}  // namespace kagent
