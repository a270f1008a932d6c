// Steps both of kagent's compilers share (native candidates, and load_inline extensions of
// KernelBench answers): writing sources, nvcc's identity for cache keys, the light
// <torch/extension.h> folder, Python.h's folder, and the choice of a heavier header tier
// when the errors show the cheaper one lacked something.
#pragma once

#include <chrono>
#include <cstddef>
#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/sha256.h"
#include "common/subprocess.h"
#include "compiler/compile_cache.h"
#include "compiler/compile_diagnostics.h"
#include "compiler/extension_shim.h"
#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"

namespace kagent {

void write_text_file(const std::filesystem::path& p, std::string_view text);

// One compiler process's record in CompileInfo::steps.
inline CompileStep step_of(const std::string& name, const RunResult& r) { return {name, r.seconds, r.exit.cpu_seconds}; }

// Compilers run at this niceness: a collection compiles ahead on every core while workers
// time candidates, and a timed launch that waits for a core counts against the candidate
// (measured: launch-bound level-3 answers at 10-40% sample noise, stopped by the 1 s cap, with
// nvcc on all cores). Nice 19 leaves the compiles every core nobody else wants; they also run
// under SCHED_IDLE (SpawnOptions::idle_priority), so a waking timing thread preempts them at once.
inline constexpr int kCompilerNice = 19;

// What every compiler run of one compile shares: a deadline for all of them together and
// the address space each process may take.
struct CompileLimits {
  std::chrono::steady_clock::time_point deadline;
  std::chrono::seconds timeout{0};
  std::size_t memory_mb = 0;  // 0: none
  std::vector<int> cpus;      // CompileOptions::cpus

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

// What a per-machine artifact built with nvcc (a precompiled header, a preprocessor prefix) is
// valid for: nvcc's identity, the host compiler's it runs (gcc from PATH) and torch's version.
std::string compilers_identity(const std::string& nvcc);

size_t count_lines(std::string_view s);

// A folder inside the cache (under `kind`, named by the text's hash) holding `text` at each
// of `names` (relative paths), each published once.
std::filesystem::path ensure_header_folder(const CompileCache& cache, std::string_view kind, std::string_view text,
                                           std::initializer_list<std::string_view> names);

// A shim folder (kShimHeader, and torch/extension.h, torch/torch.h, torch/types.h that include
// it; Slim's operators too),
// content-addressed inside the cache. `micro_std` matters only for the Micro tier.
std::filesystem::path ensure_shim(const CompileCache& cache, ShimTier tier, MicroStd micro_std = MicroStd::Lean);

// The cheapest light tier: Slim when asked for and torch's headers allow it (slim_ops_text),
// else Lite.
ShimTier first_light_tier(bool slim);

// What every build's cache key depends on besides its sources and command lines: nvcc's
// identity, torch's version, the arch, the first header tier and the shim texts.
void hash_toolchain(Sha256& h, const std::string& nvcc, const std::string& arch, ShimTier first_tier);

// Python.h's folder, asked of the build's Python (only when the real extension.h is used).
std::filesystem::path python_include_dir();

// Whether the text includes one of the headers the shim replaces.
bool includes_torch_header(std::string_view source);

// The header a file includes that also defines Slim's operator functions (ATen/ATen.h and the
// headers that include every ATen/ops/<op>.h, or one of the common operators' own): Slim's
// build of that file always fails, redefining them. Empty when there is none.
std::string header_clashing_with_slim(std::string_view source);

// The tier to retry with when `errors` show that `tier`'s header lacked something this
// file uses; nullopt when they are the file's own errors.
std::optional<ShimTier> next_tier(ShimTier tier, std::string_view source, const std::vector<Diagnostic>& errors,
                                  const std::filesystem::path& torch_prefix);

// `base` for a header tier: the shim folder first on the include path, or, for the real
// header, Python.h's folder (when `needs_python`). `micro_std` matters only for the Micro tier.
NvccSetup setup_for_tier(NvccSetup base, ShimTier tier, const CompileCache& cache, bool needs_python,
                         MicroStd micro_std = MicroStd::Lean);

// Builds with `first` tier's header, then with the next tier while the errors show the cheaper
// one lacked something (never after a limit was hit). `build(tier)` makes one attempt (with
// `errors`); `info_of(attempt)` is its CompileInfo, which at the end holds the seconds, peak
// memory and steps of every attempt (an earlier one's named "<tier> header: <step>") and, in
// its log, a line per rebuild.
template <class Build, class InfoOf>
auto build_over_tiers(ShimTier first, std::string_view source, const std::filesystem::path& torch_prefix, Build build,
                      InfoOf info_of) {
  ShimTier tier = first;
  std::string notes;
  if (tier == ShimTier::Slim)
    if (const std::string clash = header_clashing_with_slim(source); !clash.empty()) {
      // Not tried: it would fail for a reason known beforehand and cost a whole compile.
      tier = ShimTier::Lite;
      notes = fmt::format("kagent: built with the lite torch/extension.h (the slim one defines operator functions "
                          "that <{}> defines too)\n", clash);
    }
  auto a = build(tier);
  double spent = info_of(a).seconds;
  long peak_mb = info_of(a).peak_rss_mb;
  std::vector<CompileStep> earlier;  // the attempts' own, named by their header (their CPU counts too)
  while (!info_of(a).ok && info_of(a).limit.empty()) {
    const auto next = next_tier(tier, source, a.errors, torch_prefix);
    if (!next) break;
    for (const auto& st : info_of(a).steps)
      earlier.push_back({fmt::format("{} header: {}", to_string(tier), st.name), st.seconds, st.cpu_seconds});
    notes += tier == ShimTier::Slim || tier == ShimTier::Micro
                 ? fmt::format("kagent: rebuilt with the {} torch/extension.h (the build with the {} one failed)\n",
                               to_string(*next), to_string(tier))
                 : fmt::format("kagent: rebuilt with the {} torch/extension.h (the {} one lacked what this file uses)\n",
                               to_string(*next), to_string(tier));
    tier = *next;
    a = build(tier);
    spent += info_of(a).seconds;
    peak_mb = std::max(peak_mb, info_of(a).peak_rss_mb);
  }
  CompileInfo& info = info_of(a);
  info.steps.insert(info.steps.begin(), earlier.begin(), earlier.end());
  info.seconds = spent;
  info.peak_rss_mb = peak_mb;
  info.log = notes + info.log;
  return a;
}

}  // namespace kagent
