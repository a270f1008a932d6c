// load_inline extensions through kagent's nvcc pipeline (no GPU needed): a CUDA answer
// builds with ptxas resources and hits the cache the second time; a C++-only answer builds
// and its ops run on the CPU through the dispatcher, loaded by the worker's own patched
// load_inline; a signature the binding cannot take falls back; the answer's own error is a
// compile error with its file and line, and so is a function it names but never declares; an answer that includes <ATen/ATen.h> skips the slim header.
#include <chrono>
#include <filesystem>
#include <future>
#include <string>

#include <doctest/doctest.h>

#include "build_info.h"
#include "common/subprocess.h"
#include "compiler/inline_call_reader.h"
#include "compiler/inline_extension_compiler.h"
#include "compile_cache_for_tests.h"
#include "inline_cache_for_tests.h"
#include "inline_call_for_tests.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

std::string answer(const char* name) { return std::string(KAGENT_SOURCE_DIR) + "/tests/worker/python/answers/" + name; }

// The prepared cache of the whole executable (inline_cache_for_tests.h).
CompileOptions options() { return kagent::testing::prepared_inline_options(); }

using kagent::testing::only_call;

InlineCall cpp_call(std::string name, std::string source, std::vector<std::string> functions) {
  InlineCall c;
  c.key = "test";
  c.name = std::move(name);
  c.cpp_sources = {std::move(source)};
  c.functions = std::move(functions);
  return c;
}

}  // namespace

TEST_CASE("KernelBench's example answer builds with ptxas resources; the second build is a cache hit") {
  // Its first build is the prepared cache's first compile (inline_cache_for_tests.h), which the
  // last case of this file checks too: one cold build of the answer serves both.
  const InlineCall& call = kagent::testing::prepared_inline().example_call;
  const InlineBuild& b = kagent::testing::prepared_inline().example;
  CHECK_FALSE(b.info.cache_hit);
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log);
  REQUIRE(b.fallback.empty());
  REQUIRE(b.info.ok);
  CHECK(fs::exists(b.info.artifact));
  CHECK(b.info.op_name.rfind("kagent_", 0) == 0);
  REQUIRE(b.info.resources.size() == 1);
  CHECK(b.info.resources[0].kernel.find("elementwise_add_kernel") == 0);
  CHECK(b.info.command.find("-DTORCH_EXTENSION_NAME=elementwise_add") != std::string::npos);
  MESSAGE("elementwise_add built in " << b.info.seconds << " s");

  const auto t0 = std::chrono::steady_clock::now();
  const InlineBuild again = compile_inline_extension(call, options());
  CHECK(again.info.cache_hit);
  CHECK(again.info.artifact == b.info.artifact);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0);
}

TEST_CASE("a C++-only answer's ops run on the CPU through the dispatcher, loaded by the worker's load_inline") {
  const InlineCall call = only_call(answer("cpp_only.py"));
  const InlineBuild b = compile_inline_extension(call, options());
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log);
  REQUIRE(b.fallback.empty());
  REQUIRE(b.info.ok);
  // The worker's path: the answer runs with load_inline patched, ModelNew calls kagent's op.
  const std::string script = R"py(
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
from kagent_worker.inline_patch import InlineExtensions
from kagent_worker.loading import exec_file
prebuilt = [{"key": sys.argv[3], "library": sys.argv[4], "op_namespace": sys.argv[5],
             "functions": ["axpb", "both", "pad_sum", "scale_", "shape_plus"]}]
with InlineExtensions(prebuilt) as p:
    m = exec_file(sys.argv[2], "candidate_load_error")
x = torch.tensor([1.0, -2.0])
assert torch.equal(m.ModelNew()(x), torch.tensor([5.0, -1.0])), m.ModelNew()(x)
assert torch.equal(m.ext.axpb(x, 1.5, 2, True), -(x * 1.5 + 2))
assert m.ext.shape_plus(torch.zeros(2, 3), [4, 5]) == [2, 3, 4, 5]
a, b = m.ext.both(x, None)
assert torch.equal(a, x + 1) and torch.equal(b, x)
y = x.clone()
assert m.ext.scale_(y, 3.0) is None and torch.equal(y, x * 3)
assert torch.equal(m.ext.pad_sum(x, (1, 2), (-100.0, 11.0)), (x + 12).clamp(-100, 11))
print(json.dumps(p.records))
)py";
  SpawnOptions so;
  so.argv = {build::kPythonExecutable, "-c", script, std::string(KAGENT_SOURCE_DIR) + "/tools/worker/python",
             answer("cpp_only.py"), call.key, b.info.artifact, b.info.op_name};
  const RunResult r = run_command(so, std::chrono::seconds(120));
  INFO(r.output);
  CHECK(r.exit.exited);
  CHECK(r.exit.code == 0);
  CHECK(r.output.find(R"("name": "cpp_only_ext", "built_by": "kagent")") != std::string::npos);
}

TEST_CASE("a function the binding cannot take falls back to torch; the answer's own error is a compile error") {
  // The three builds do not depend on each other: they run side by side (each is mostly one g++).
  // Overloaded: which one to bind is ambiguous (pybind11 would refuse too), so torch decides.
  auto overloaded_build = std::async(std::launch::async, [] {
    return compile_inline_extension(
        cpp_call("overloaded_ext", "int64_t twice(int64_t x) { return 2 * x; }\ndouble twice(double x) { return 2 * x; }\n",
                 {"twice"}),
        options());
  });
  auto broken_build = std::async(std::launch::async, [] {
    return compile_inline_extension(
        cpp_call("broken_ext", "int64_t twice(int64_t x) {\n  return 2 * y;\n}\n", {"twice"}), options());
  });
  // functions= names a function cpp_sources never declares (CUDA-L1: cpp_sources=""): torch's
  // main.cpp cannot bind it either, so it is the answer's compile error, not a fallback.
  auto undeclared_build = std::async(std::launch::async, [] {
    return compile_inline_extension(
        cpp_call("undeclared_ext", "int64_t other(int64_t x) { return x; }\n", {"twice"}), options());
  });

  const InlineBuild overloaded = overloaded_build.get();
  INFO("log: " << overloaded.info.log);
  CHECK_FALSE(overloaded.info.ok);
  CHECK(overloaded.fallback.find("kagent's build of overloaded_ext failed outside the answer's own code") == 0);

  const InlineBuild broken = broken_build.get();
  INFO("errors: " << broken.info.errors);
  CHECK_FALSE(broken.info.ok);
  CHECK(broken.fallback.empty());
  CHECK(broken.info.errors.find("broken_ext/main.cpp:3:") != std::string::npos);
  CHECK(broken.info.errors.find("return 2 * y;") != std::string::npos);

  const InlineBuild undeclared = undeclared_build.get();
  INFO("errors: " << undeclared.info.errors);
  CHECK_FALSE(undeclared.info.ok);
  CHECK(undeclared.fallback.empty());
  CHECK(undeclared.info.errors.find("undeclared_ext/main.cpp: error: functions= names `twice`, which cpp_sources does "
                                    "not declare") == 0);
}

TEST_CASE("an answer that includes <ATen/ATen.h> is built with the lite header at once, without a slim attempt") {
  // Slim's operators are torch's own inline functions; ATen.h defines them again, so a slim
  // build of this file always failed, a whole compile spent before the lite one.
  InlineCall call = only_call(answer("elementwise_add.py"));
  REQUIRE_FALSE(call.cuda_sources.empty());
  call.cuda_sources[0] = "#include <ATen/ATen.h>\n" + call.cuda_sources[0];
  const InlineBuild b = compile_inline_extension(call, options());
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log);
  REQUIRE(b.fallback.empty());
  REQUIRE(b.info.ok);
  CHECK(b.info.log.find("built with the lite torch/extension.h (the slim one defines operator functions that "
                        "<ATen/ATen.h> defines too)") != std::string::npos);
  for (const auto& step : b.info.steps) {
    INFO(step.name);
    CHECK(step.name.find("header: ") == std::string::npos);  // no earlier tier's steps
  }
}

TEST_CASE("the precompiled headers prepared ahead are the ones an answer's compile then uses") {
  // A collection of KernelBench answers prepares them while its workers start
  // (EvaluationSettings::prepare_inline_headers): the first compiles must find them, not build
  // their own under other keys. The prepared cache of this executable is that: a fresh cache,
  // prepare_inline_headers, then KernelBench's example answer as its first compile, whose build
  // the first case of this file checks as well (inline_cache_for_tests.h).
  const CompileOptions o = options();
  const InlineBuild& b = kagent::testing::prepared_inline().example;
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log);
  REQUIRE(b.info.ok);
  REQUIRE_FALSE(b.info.cache_hit);  // a compile, not an entry made before
  bool host_compile = false;
  for (const auto& step : b.info.steps) {
    INFO(step.name);
    CHECK(step.name.rfind("pch ", 0) == std::string::npos);  // nothing precompiled during the compile
    host_compile |= step.name == "cuda.cu host compile";
  }
  CHECK(host_compile);
  // A second call finds both and builds nothing.
  const auto t0 = std::chrono::steady_clock::now();
  prepare_inline_headers(o);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 2.0);
}
