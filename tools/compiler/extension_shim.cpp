#include "compiler/extension_shim.h"

#include <fstream>
#include <iterator>
#include <string>

namespace kagent {

namespace {
// Operators kernels' host code commonly calls; each header is small (ATen/ops/<op>.h).
constexpr std::string_view kLiteOps[] = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "rand", "randn", "cat", "stack", "matmul", "mm", "bmm", "addmm", "baddbmm", "linear", "add", "sub",
    "mul", "div", "sum", "mean", "amax", "softmax", "log_softmax", "relu", "gelu", "sigmoid", "tanh", "exp", "sqrt",
    "conv2d", "layer_norm", "batch_norm", "clamp", "where", "pad", "constant_pad_nd", "from_blob", "scalar_tensor"};

std::string_view common_text();
}  // namespace

std::string to_string(ShimTier tier) {
  switch (tier) {
    case ShimTier::Micro: return "micro";
    case ShimTier::Slim: return "slim";
    case ShimTier::Lite: return "lite";
    case ShimTier::ATen: return "aten";
    case ShimTier::Full: return "full";
  }
  return "?";
}

std::string extension_shim_includes(ShimTier tier) {
  std::string includes;
  if (tier == ShimTier::Micro) {
    includes = "#include <kagent/micro_tensor.h>\n";  // micro_header.h's kMicroHeaderPath
  } else if (tier == ShimTier::Slim) {
    includes = "#include <ATen/core/Tensor.h>\n#include <ATen/Dispatch.h>\n#include <c10/core/TensorOptions.h>\n"
               "#include <" + std::string(kSlimOpsHeader) + ">\n";
  } else if (tier == ShimTier::Lite) {
    includes = "#include <ATen/core/Tensor.h>\n#include <ATen/Dispatch.h>\n";
    for (auto op : kLiteOps) includes += "#include <ATen/ops/" + std::string(op) + ".h>\n";
  } else {
    includes = "#include <ATen/ATen.h>\n";
  }
  return includes;
}

std::string extension_shim_text(ShimTier tier) {
  std::string text(common_text());
  const std::string marker = "// @INCLUDES@\n";
  text.replace(text.find(marker), marker.size(), extension_shim_includes(tier));
  return "// kagent: light <torch/extension.h>, tier " + to_string(tier) + "\n" + text;
}

bool is_common_op(std::string_view op) {
  for (auto o : kLiteOps)
    if (o == op) return true;
  return false;
}

std::optional<std::string> slim_ops_text(const std::filesystem::path& torch_include) {
  std::string out = "#pragma once\n// kagent: torch's inline operator functions (ATen/ops/<op>.h) without the headers\n"
                    "// those files include besides their declarations; see extension_shim.h.\n";
  for (auto op : kLiteOps) {
    const std::string name(op);
    std::ifstream in(torch_include / "ATen" / "ops" / (name + ".h"), std::ios::binary);
    if (!in) return std::nullopt;
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string decl = "#include <ATen/ops/" + name + "_ops.h>";
    const size_t from = text.find(decl);
    // Generated headers end with `#else #error ... #endif` under a TORCH_STABLE_ONLY guard.
    const size_t guard = text.find("#if !defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)");
    const size_t to = text.rfind("#else");
    if (from == std::string::npos || guard == std::string::npos || to == std::string::npos || to < from) {
      out += "#include <ATen/ops/" + name + ".h>\n";  // hand-written (from_blob.h): included whole
      continue;
    }
    out += "// ATen/ops/" + name + ".h\n#if !defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)\n" +
           text.substr(from, to - from) + "#endif\n";
  }
  return out;
}

namespace {
std::string_view common_text() {
  // The torch:: names mirror torch/types.h (which itself costs as much again as ATen,
  // mostly through torch/library.h). A file that also includes the real frontend may
  // clash with these; native_compiler retries such a file without the shim.
  static constexpr std::string_view text = R"cpp(#pragma once
// @INCLUDES@

#include <optional>
#include <string>

namespace torch {
using namespace at;  // NOLINT: torch::Tensor, torch::empty, ... as in torch/types.h
using std::nullopt;  // NOLINT
using std::optional; // NOLINT
using Dtype = at::ScalarType;
constexpr auto kUInt8 = at::kByte;
constexpr auto kInt8 = at::kChar;
constexpr auto kInt16 = at::kShort;
constexpr auto kInt32 = at::kInt;
constexpr auto kInt64 = at::kLong;
constexpr auto kUInt16 = at::kUInt16;
constexpr auto kUInt32 = at::kUInt32;
constexpr auto kUInt64 = at::kUInt64;
constexpr auto kFloat16 = at::kHalf;
constexpr auto kFloat32 = at::kFloat;
constexpr auto kFloat64 = at::kDouble;
constexpr auto kU8 = kUInt8;
constexpr auto kU16 = kUInt16;
constexpr auto kU32 = kUInt32;
constexpr auto kU64 = kUInt64;
constexpr auto kI8 = kInt8;
constexpr auto kI16 = kInt16;
constexpr auto kI32 = kInt32;
constexpr auto kI64 = kInt64;
constexpr auto kF16 = kFloat16;
constexpr auto kF32 = kFloat32;
constexpr auto kF64 = kFloat64;
}  // namespace torch

// kagent binds `forward` itself; a PYBIND11_MODULE block written out of habit compiles
// to an unused function.
namespace kagent_pybind_stub {
struct module_ {
  template <class... A> module_& def(A&&...) { return *this; }
  template <class... A> module_& attr(A&&...) { return *this; }
  std::string& doc() { return doc_; }
  std::string doc_;
};
struct arg {
  template <class... A> explicit arg(A&&...) {}
  template <class T> arg& operator=(T&&) { return *this; }
};
}  // namespace kagent_pybind_stub
namespace pybind11 {
using kagent_pybind_stub::arg;
using module_ = kagent_pybind_stub::module_;
using module = kagent_pybind_stub::module_;
}  // namespace pybind11
namespace py = pybind11;
#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME kagent_extension
#endif
#define PYBIND11_MODULE(name, m) \
  [[maybe_unused]] static void kagent_unused_pybind_module_##name(::kagent_pybind_stub::module_& m)
)cpp";
  return text;
}
}  // namespace

}  // namespace kagent
