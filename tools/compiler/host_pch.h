// Precompiled headers for g++, the host compiler of both parts of a load_inline extension.
// Every answer's host code parses the same torch headers; g++ can load them parsed instead
// (a .gch file), built once per toolchain, torch, arch, header tier and base flags and kept in the
// compile cache like a compiled candidate. The answer's own code is still compiled every time.
//
// - The C++ part (main.cpp): the tier's torch headers, torch/library.h (kagent's binding needs
//   it; torch's real extension.h includes it before the answer's code too) and the binding's
//   standard headers, given to g++ with `-include`.
// - The CUDA part: cudafe++'s output (the host code g++ compiles) begins, for every answer, with
//   the same ~225,000 lines: the three implicit headers of cuda.cu, expanded, once every answer
//   uses the same module id. That prefix is taken from the output for a cuda.cu of those three
//   lines alone and precompiled; an answer's output that starts with it byte for byte is compiled
//   as `#include "<prefix>"` followed by the rest, which is the same text.
// The compile without the precompiled header is the same compile, only slower: a header that
// cannot be built (or that g++ finds invalid for a command) costs time, never a verdict.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"
#include "compiler/extension_shim.h"
#include "compiler/nvcc_command.h"
#include "compiler/nvcc_split.h"

namespace kagent {

// The header to -include in the C++ part's compile (its .gch beside it), built first when
// missing; nullopt when it cannot be built for this setup. `setup` is the tier's
// (setup_for_tier); the build's processes are appended to `steps`.
std::optional<std::filesystem::path> ensure_cpp_part_pch(const CompileCache& cache, const NvccSetup& setup,
                                                         ShimTier tier, const CompileLimits& limits,
                                                         std::vector<CompileStep>* steps);

// The CUDA part's precompiled prefix: the module id it was built with (every compile that uses
// it writes the same one) and the header holding its text (the .gch beside it).
struct CudaPrefixPch {
  std::string module_id;
  std::filesystem::path header;
};

// The module id a build of the prefix for `setup` has, without building it: an answer's compile
// starts with it and waits for the prefix only at its host compile (after cudafe++ and cicc).
std::string cuda_prefix_module_id(const NvccSetup& setup);

// Built first when missing; nullopt when it cannot be built. `setup` is the tier's.
std::optional<CudaPrefixPch> ensure_cuda_part_pch(const CompileCache& cache, const NvccSetup& setup,
                                                  const CompileLimits& limits, std::vector<CompileStep>* steps);

// When cudafe++'s output `source` starts with the prefix, rewrites it as an #include of the
// prefix's header followed by the rest, and says so; otherwise leaves it alone.
bool use_cuda_prefix(const std::filesystem::path& source, const CudaPrefixPch& pch);

// The three lines load_inline puts before an answer's CUDA sources.
inline constexpr std::string_view kCudaImplicitHeaders =
    "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n";

}  // namespace kagent
