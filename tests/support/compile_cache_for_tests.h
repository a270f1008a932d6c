// The compile options of a test file that builds with kagent's nvcc pipeline: a compile cache of
// its own (a TempDir made when the file's tests start, removed with everything in it at exit)
// and the H100's target, which nvcc builds for without a GPU.
#pragma once

#include "compiler/native_compiler.h"
#include "temp_dir.h"

namespace kagent::testing {

inline CompileOptions compile_options(const TempDir& cache) {
  CompileOptions o;
  o.cache_dir = cache.str();
  o.arch = "sm_90a";
  return o;
}

}  // namespace kagent::testing
