// compile_inline_extension: one load_inline call of a KernelBench answer (as
// inline_calls.py read and normalised it) -> a shared object registering each listed
// function as a dispatcher op `kagent_<hash>::<function>`, built with kagent's nvcc pipeline:
// the light <torch/extension.h> (heavier tiers only when the sources need them), the C++ and
// CUDA parts compiled at once, ptxas resources, and the content-hash cache.
//
// The sources are laid out as torch's load_inline lays them out (main.cpp: the extension
// header then cpp_sources; cuda.cu: torch/types.h, cuda.h, cuda_runtime.h then
// cuda_sources), with kagent's binding (inline_binding.h) in place of the pybind11 module.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"
#include "result/eval_result.h"

namespace kagent {

// One load_inline call, normalised (tools/worker/python/kagent_worker/inline_calls.py).
struct InlineCall {
  std::string key;   // SHA-256 of the normalised arguments: how the worker recognises the call
  std::string name;
  std::vector<std::string> cpp_sources, cuda_sources, functions;
  std::vector<std::string> extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths;
  bool no_implicit_headers = false;
};
// From the extractor's {"key", "call": {...}} record.
void from_json(const nlohmann::json& j, InlineCall& c);

// Beside the library in its cache entry when main.cpp is a shared binding (shared_binding.h).
inline constexpr std::string_view kSharedBindingFile = "binding.so";

struct InlineBuild {
  CompileInfo info;      // ok: info.artifact is the library and info.op_name its op namespace
  std::string fallback;  // not empty: kagent did not build it, torch's load_inline will; says why
  // Not empty: the library is cuda.cu alone (getters kagent_fn_<i>), and this shared object's
  // kagent_register gives the functions their ops; empty: the library registers them itself.
  std::string binding;
};

// A compile error in the answer's own sources is info.ok = false with the errors (what
// torch's build would also stop at); a failure of kagent's binding (a signature the
// dispatcher cannot take, an overloaded name) or of the link is a fallback. `options`:
// arch, cache, nvcc, timeout, light header (display_name is not used).
InlineBuild compile_inline_extension(const InlineCall& call, const CompileOptions& options);

// The per-machine precompiled headers an extension's compile uses with the first header tier
// (the binding's and the cuda.cu prefix's, host_pch.h), built side by side now when missing, so
// that a collection's first compiles do not wait for them (about 10 s of one core each, built
// before by whichever answer came first while every other compile waited). Best effort:
// whatever fails here is built, or reported, by the first compile that needs it.
void prepare_inline_headers(const CompileOptions& options);

// The two files as load_inline writes them (without kagent's binding).
std::string inline_cpp_text(const InlineCall& call);
std::string inline_cuda_text(const InlineCall& call);

// nvcc's compile of the CUDA part (`setup` is the tier's): the extension's name, include paths
// and extra_cuda_cflags added to a candidate's flags.
std::vector<std::string> inline_cuda_argv(const NvccSetup& setup, const InlineCall& call,
                                          const std::filesystem::path& src, const std::filesystem::path& obj);

}  // namespace kagent
