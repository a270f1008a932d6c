// main.cpp compiled once for every answer that declares the same functions (the normalised
// declarations of binding_declarations.h), instead of once per answer: a shared object in the
// compile cache whose `kagent_register` gives run-time function pointers their dispatcher ops
// (inline_binding.h's shared_binding_suffix). The answer's own .so is then cuda.cu alone, with
// a getter per function; the worker loads both and registers (kagent_worker/inline_patch.py).
//
// That the two halves agree is checked as the link of torch's build would check it: the
// binding's object names each slot's mangled symbol, and the answer's cuda.o must define the
// same symbol under the function's own name, else main.cpp is built as before.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"

namespace kagent {

struct SharedBindingRequest {
  std::string source;  // the whole main.cpp: head, normalised declarations, shared_binding_suffix
  size_t slots = 0;
  // Command lines for the compile (source -> object) and the link (object -> shared object).
  std::function<std::vector<std::string>(const std::filesystem::path&, const std::filesystem::path&)> compile, link;
  // Flags added to the compile only when it runs, not part of the key: the precompiled header
  // (its text is decided by what the key holds), built by this call when missing.
  std::function<std::vector<std::string>()> speedups;
  std::string toolchain;  // what else decides the binary (nvcc's identity, arch, header tier)
};

struct SharedBinding {
  std::filesystem::path library;      // in the cache
  std::vector<std::string> suffixes;  // per slot: the mangled parameter list after `_Z<len><name>`
  std::string key;                    // the cache key (for the log)
  bool built_now = false;
};

// What the cache knows of the binding: nullopt when it was never built; a nullopt inside when
// it did not build (remembered), so that an answer skips the shared path before compiling.
std::optional<std::optional<SharedBinding>> lookup_shared_binding(const CompileCache& cache,
                                                                  const SharedBindingRequest& request);

// The binding, from the cache or built now (once per key, under the key's lock); nullopt when it
// does not build (remembered) or ran into a limit (not remembered).
std::optional<SharedBinding> ensure_shared_binding(const CompileCache& cache, const SharedBindingRequest& request,
                                                   const CompileLimits& limits, std::vector<CompileStep>* steps);

// `nm -P` of an object file: (symbol, type letter) pairs; nullopt when nm failed.
std::optional<std::vector<std::pair<std::string, char>>> object_symbols(const std::filesystem::path& object,
                                                                        const CompileLimits& limits);

// `_Z<len><name><suffix>`: the symbol of a global function `name` with that parameter list.
std::string mangled_function(const std::string& name, const std::string& suffix);

// The name of the first of `names` whose mangled symbol (with the matching suffix) `symbols`
// does not define; empty when it defines them all.
std::string first_undefined(const std::vector<std::pair<std::string, char>>& symbols,
                            const std::vector<std::string>& names, const std::vector<std::string>& suffixes);

}  // namespace kagent
