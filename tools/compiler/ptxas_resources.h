// Per-kernel resource usage from `ptxas -v` output (registers, shared memory, spills).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "result/eval_result.h"

namespace kagent {

// Parses every "Compiling entry function" block of ptxas -v output. Device (non-entry)
// functions are skipped: they have no launch resources of their own. Kernel names are
// demangled where possible; a kernel compiled for several archs appears once per arch.
std::vector<KernelResources> parse_ptxas_resources(std::string_view log);

// Itanium C++ demangling; returns the input unchanged when it is not a mangled name.
std::string demangle(const std::string& name);

}  // namespace kagent
