// A turn's SASS in the run folder: the compiler leaves the gzip disassembly in its cache; the
// run keeps its own copy beside the candidate's source, so the record stays readable when
// the cache is cleared or the run folder is moved elsewhere.
#pragma once

#include <filesystem>

#include "result/eval_result.h"

namespace kagent::traj {

// Copies the result's SASS file (if any) to `<candidate without extension>.sass.gz` and
// points `compile.sass.file` at it, relative to `run_dir`. A copy that fails turns the SASS
// into a missing one with the reason; the verdict is never touched.
void keep_sass_beside(EvalResult& result, const std::filesystem::path& candidate_file,
                      const std::filesystem::path& run_dir);

}  // namespace kagent::traj
