#include "worker/guards/own_code.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <string_view>

namespace kagent::worker {

namespace {
// Words (lower case) that name a way to build or launch a kernel from Python.
constexpr std::array<std::string_view, 16> kJitWords{"triton",   "cupy",    "numba",        "jiterator",
                                                     "pycuda",   "nvrtc",   "cuda.core",    "cuda.bindings",
                                                     "ctypes",   "cffi",    "rawkernel",    "sourcemodule",
                                                     "tilelang", "cutlass", "thunderkittens", "tvm"};
}  // namespace

bool may_launch_own_kernels(const std::string& source, bool built_extensions) {
  if (built_extensions) return true;
  // A call of torch's builders, an alias taken of one, or any `load(` / `compile(` at all.
  static const std::regex call(R"(load_inline\s*(\(|as\b)|cpp_extension\.load\s*\(|\bload\s*\(|\bcompile\s*\(|import\s+load\b)");
  if (std::regex_search(source, call)) return true;
  std::string lower(source);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(kJitWords.begin(), kJitWords.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string::npos; });
}

}  // namespace kagent::worker
