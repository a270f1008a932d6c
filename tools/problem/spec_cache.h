// ProblemSpecs cached on disk by problem file content and torch version, so that kagent can
// compile a candidate for a known problem while the worker is still starting. Identical files
// share an entry; a loaded spec carries the asked file's own path, name and level.
#pragma once

#include <optional>
#include <string>

#include "problem/problem_spec.h"

namespace kagent {

std::optional<ProblemSpec> load_cached_spec(const std::string& cache_dir, const std::string& problem_path);
void store_cached_spec(const std::string& cache_dir, const ProblemSpec& spec);

}  // namespace kagent
