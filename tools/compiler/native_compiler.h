// compile_native: a native candidate's source -> a shared object whose static
// initializer registers `kagent_<hash>::forward` with the c10 dispatcher.
//
// Pipeline: append kagent's checks and entry point to the source (user lines keep their
// numbers), compile it with nvcc (-c, ptxas -v), compile the per-signature host
// registration once (cached, in parallel), link with --no-undefined against libtorch, then
// disassemble the candidate's object (its own kernels only) into CompileInfo::sass.
// Results (failures too) are cached by content hash; see compile_cache.h.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "problem/problem_spec.h"
#include "result/eval_result.h"

namespace kagent {

// A compile of a plain candidate takes 10-30 s and under 1.5 GB; these stop a runaway (deep
// template recursion, a huge unrolled loop) long before it takes the machine.
inline constexpr std::chrono::seconds kDefaultCompileTimeout{300};
inline constexpr std::size_t kDefaultCompileMemoryMb = 8192;

struct CompileOptions {
  std::string arch = "sm_90a";            // see arch_for_compute_capability()
  std::string cache_dir;                  // empty: cache_root()/compile (common/paths.h)
  std::string nvcc;                       // empty: $KAGENT_NVCC, else the build's nvcc
  std::string cuobjdump;                  // empty: $KAGENT_CUOBJDUMP, else the build's (sass_dump.h)
  std::vector<std::string> extra_flags;   // appended to the candidate's nvcc command
  // Limits of the compile; running past one kills nvcc and every process it started and is a
  // compile error whose CompileInfo::limit names it. nullopt: $KAGENT_COMPILE_TIMEOUT (seconds)
  // and $KAGENT_COMPILE_MEMORY_MB, else kDefaultCompileTimeout / kDefaultCompileMemoryMb.
  std::optional<std::chrono::seconds> timeout;  // compile_timeout: wall clock of the whole compile
  std::optional<std::size_t> memory_limit_mb;   // compile_memory: address space of each compiler process
  bool use_cache = true;                  // false: always compile (the result is still stored)
  int max_errors = 5;                     // errors shown in CompileInfo::errors
  std::size_t log_limit = 20000;          // bytes of CompileInfo::log
  std::string display_name = "kernel.cu"; // the candidate's file name in errors and logs
  // `#include <torch/extension.h>` / <torch/torch.h> resolve to kagent's light versions
  // (see extension_shim.h), moving to heavier ones only when a file needs them; false:
  // the real headers (C++ frontend, pybind11, Python.h) from the start.
  bool light_extension_header = true;
  // load_inline extensions whose cpp_sources only declare: main.cpp as a binding shared by every
  // answer with the same declarations (shared_binding.h). nullopt: on unless
  // $KAGENT_SHARED_BINDING is 0 (the switch for comparing the two, and a way back).
  std::optional<bool> shared_binding;
  // load_inline extensions on the shared binding whose files include no other torch header: cuda.cu
  // first with the micro header (micro_header.h), no torch header at all. nullopt: on unless
  // $KAGENT_MICRO_HEADER is 0.
  std::optional<bool> micro_header;
  // The cores the compilers run on (empty: any): the pool leaves a few free for its workers
  // (common/cpu_affinity.h). Not part of any cache key.
  std::vector<int> cpus;
};

// The candidate's failures (compile errors, a bad signature, an unsupported argument type,
// an unknown arch, a timeout) come back as ok=false with errors/reason. Throws only when
// kagent itself cannot work (cache folder not writable, no nvcc to start is reported in
// errors instead).
CompileInfo compile_native(const ProblemSpec& spec, std::string_view source, const CompileOptions& options);

}  // namespace kagent
