// Steps both of kagent's compilers share (native candidates, and load_inline extensions of
// KernelBench answers): writing sources, nvcc's identity for cache keys, the light
// <torch/extension.h> folder, Python.h's folder, and the choice of a heavier header tier
// when the errors show the cheaper one lacked something.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sha256.h"
#include "common/subprocess.h"
#include "compiler/compile_cache.h"
#include "compiler/compile_diagnostics.h"
#include "compiler/extension_shim.h"
#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"

namespace kagent {

void write_text_file(const std::filesystem::path& p, std::string_view text);

// What every compiler run of one compile shares: a deadline for all of them together and
// the address space each process may take.
struct CompileLimits {
  std::chrono::steady_clock::time_point deadline;
  std::chrono::seconds timeout{0};
  std::size_t memory_mb = 0;  // 0: none

  std::chrono::milliseconds left() const;
  // Runs one compiler command under these limits.
  RunResult run(SpawnOptions so) const;
  // The limit a finished run ran into, or "" when it failed (or not) on its own.
  std::string hit(const RunResult& r) const;
  std::string describe(const std::string& limit) const;
};

// The options' limits, else $KAGENT_COMPILE_TIMEOUT / $KAGENT_COMPILE_MEMORY_MB, else the
// defaults; the deadline starts now. Throws std::invalid_argument for a malformed variable.
CompileLimits resolve_compile_limits(const CompileOptions& o);

// nvcc, the arch (validated) and torch's folder from the options. Throws std::invalid_argument
// for an unknown arch.
NvccSetup base_setup(const CompileOptions& o);

// Which nvcc this is, cheaply: its resolved path, size and mtime (no `nvcc --version` run).
std::string nvcc_identity(const std::string& nvcc);

size_t count_lines(std::string_view s);

// A shim folder (torch/extension.h, torch/torch.h and torch/types.h), content-addressed
// inside the cache.
std::filesystem::path ensure_shim(const CompileCache& cache, ShimTier tier);

// What every build's cache key depends on besides its sources and command lines: nvcc's
// identity, torch's version, the arch, the first header tier and the shim texts.
void hash_toolchain(Sha256& h, const std::string& nvcc, const std::string& arch, ShimTier first_tier);

// Python.h's folder, asked of the build's Python (only when the real extension.h is used).
std::filesystem::path python_include_dir();

// Whether the text includes one of the headers the shim replaces.
bool includes_torch_header(std::string_view source);

// The tier to retry with when `errors` show that `tier`'s header lacked something this
// file uses; nullopt when they are the file's own errors.
std::optional<ShimTier> next_tier(ShimTier tier, std::string_view source, const std::vector<Diagnostic>& errors,
                                  const std::filesystem::path& torch_prefix);

}  // namespace kagent
