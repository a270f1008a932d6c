// One compile cache for the load_inline builds of kagent_compiler_inline_nvcc_tests, with the
// per-machine parts prepared once, as a collection prepares them (prepare_inline_headers): the
// binding's precompiled torch headers, the slim and micro tiers' precompiled cuda.cu prefixes, the
// preprocessor's prefixes and the micro support library. Each test file had a cache of its own and
// built all of these again (about a minute of one core each time), though none of their cases is
// about how they get built; the cases that are keep a fresh cache of their own (host_pch_test.cpp's
// first: the first answer builds them, the next one only uses them). Made when a test first asks
// for it, removed with everything in it at exit (a TempDir).
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "compile_cache_for_tests.h"
#include "compiler/inline_extension_compiler.h"
#include "inline_answer_for_tests.h"
#include "inline_call_for_tests.h"

namespace kagent::testing {

// The cache, and the first compile made in it, right after the preparation: KernelBench's example
// answer (tests/worker/python/answers/elementwise_add.py). That compile is made here, before any
// test's, so that what it precompiled (nothing, inline_nvcc_test.cpp checks) is the preparation's
// doing and not an earlier test's compile's.
struct PreparedInlineCache {
  TempDir dir{"kagent-inline-cache"};
  InlineCall example_call;
  InlineBuild example;  // its first build, from the prepared cache
  PreparedInlineCache() {
    prepare_inline_headers(compile_options(dir));
    example_call = only_call(std::string(KAGENT_SOURCE_DIR) + "/tests/worker/python/answers/elementwise_add.py");
    example = compile_inline_extension(example_call, compile_options(dir));
  }
};

inline const PreparedInlineCache& prepared_inline() {
  static const PreparedInlineCache cache;
  return cache;
}

inline const TempDir& prepared_inline_cache() { return prepared_inline().dir; }

inline CompileOptions prepared_inline_options() { return compile_options(prepared_inline_cache()); }

// An answer whose cuda.cu has an error of its own (a name it never declares, line 5 of cuda.cu as
// load_inline writes it) and its build in the prepared cache, made once: shared_binding_test.cpp
// checks that it is the answer's compile error with nothing of the shared binding's getters, and
// micro_header_test.cpp that it is the slim tier's with nothing of the micro header. Each built an
// answer of its own for it (a micro, a slim and a lite compile each), on the same path.
struct BrokenCudaAnswer {
  TempDir dir{"kagent-broken-cuda-answer"};
  std::string file;
  InlineBuild build;
  BrokenCudaAnswer() {
    file = inline_answer_file(dir.str(), "broken_cuda_ext", "torch::Tensor neg(torch::Tensor x);",
                              "torch::Tensor neg(torch::Tensor x) {\n  return x.neg() + undefined_name;\n}\n", "neg");
    build = compile_inline_extension(only_call(file), prepared_inline_options());
  }
};

inline const BrokenCudaAnswer& broken_cuda_answer() {
  static const BrokenCudaAnswer answer;
  return answer;
}

}  // namespace kagent::testing
