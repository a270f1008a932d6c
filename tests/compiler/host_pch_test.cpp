// The precompiled host headers of load_inline builds (compiler/host_pch.h), on the real nvcc and
// g++ (no GPU needed): built by the first answer and only then, g++ takes them for the next
// answer's C++ part and CUDA part (gcc -H marks a precompiled header it uses with '!'), a
// cudafe++ output that does not start with the prefix is left alone, and where the slim
// torch/extension.h lacks what an answer uses, the answer builds with the lite one.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

#include "common/subprocess.h"
#include "compiler/build_steps.h"
#include "compiler/host_pch.h"
#include "compiler/inline_extension_compiler.h"
#include "compiler/nvcc_command.h"
#include "compiler/nvcc_split.h"
#include "compile_cache_for_tests.h"
#include "inline_cache_for_tests.h"
#include "temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

// A cache of this file's own, fresh: its first case is about which answer builds the headers.
const kagent::testing::TempDir kCacheDir("kagent-host-pch-test");

CompileOptions options() { return kagent::testing::compile_options(kCacheDir); }

CompileLimits limits() {
  CompileLimits l;
  l.timeout = std::chrono::seconds(600);
  l.deadline = std::chrono::steady_clock::now() + l.timeout;
  return l;
}

// An answer as KernelBench-trained models write them: a kernel, a host function making its
// output with a torch factory, the declaration as cpp_sources.
InlineCall cuda_call(const std::string& name, const std::string& op) {
  InlineCall c;
  c.key = name;
  c.name = name;
  c.functions = {name + "_cuda"};
  c.cpp_sources = {"torch::Tensor " + name + "_cuda(torch::Tensor x);"};
  c.cuda_sources = {"#include <torch/extension.h>\n#include <cuda_runtime.h>\n"
                    "__global__ void k(const float* x, float* y, int n) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < n) y[i] = " + op + ";\n}\n"
                    "torch::Tensor " + name + "_cuda(torch::Tensor x) {\n"
                    "  auto y = torch::zeros_like(x);\n"
                    "  int n = x.numel();\n"
                    "  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
                    "  return y;\n}\n"};
  return c;
}

bool has_step(const CompileInfo& c, const std::string& prefix) {
  return std::any_of(c.steps.begin(), c.steps.end(), [&](const CompileStep& s) { return s.name.rfind(prefix, 0) == 0; });
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("the host headers are precompiled by the first answer, and the next answer's compiles use them") {
  const InlineBuild first = compile_inline_extension(cuda_call("first_ext", "2.0f * x[i]"), options());
  INFO("errors: " << first.info.errors << "\nlog: " << first.info.log);
  REQUIRE(first.fallback.empty());
  REQUIRE(first.info.ok);
  CHECK(has_step(first.info, "pch main.cpp headers"));
  CHECK(has_step(first.info, "pch cuda.cu prefix gch"));
  // main.cpp only declares: it is the binding shared with the next answer (shared_binding.h).
  for (const char* step : {"cuda.cu cudafe++", "cuda.cu cicc", "cuda.cu host compile", "shared binding main.cpp", "link"})
    CHECK_MESSAGE(has_step(first.info, step), step);
  for (const auto& s : first.info.steps) CHECK_MESSAGE(s.seconds > 0, s.name);

  const InlineBuild second = compile_inline_extension(cuda_call("second_ext", "x[i] + 1.0f"), options());
  INFO("errors: " << second.info.errors << "\nlog: " << second.info.log);
  REQUIRE(second.info.ok);
  CHECK_FALSE(second.info.cache_hit);
  CHECK_FALSE(has_step(second.info, "pch"));  // built once
  CHECK_FALSE(has_step(second.info, "shared binding"));  // and the binding too

  // Both headers, as the next answer's compiles see them: gcc -H lists a precompiled header it
  // uses with '!' ('x' when it finds one it cannot use). The slim tier's, from the prepared cache
  // (inline_cache_for_tests.h), where they are built under the same keys: the answers above are
  // micro ones and never built the slim cuda.cu prefix here (a whole prefix build, only for this).
  const CompileCache cache(CompileCache::default_dir(kagent::testing::prepared_inline_cache().str()));
  const NvccSetup setup = setup_for_tier(base_setup(kagent::testing::prepared_inline_options()), ShimTier::Slim, cache, true);
  const auto prefix = ensure_cuda_part_pch(cache, setup, limits(), nullptr);
  REQUIRE(prefix);
  CHECK(prefix->module_id.find("_7_cuda_cu_") != std::string::npos);
  CHECK(prefix->module_id == cuda_prefix_module_id(setup));  // what compiles start with, before it exists
  const auto cpp_header = ensure_cpp_part_pch(cache, setup, ShimTier::Slim, limits(), nullptr);
  REQUIRE(cpp_header);
  kagent::testing::TempDir dir("kagent-host-pch");
  // The C++ part's compile does not depend on the CUDA part's: it runs beside it.
  dir.write("main.cpp", "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) { return x; }\n");
  SpawnOptions cpp;
  cpp.argv = host_compile_argv(setup, dir.path() / "main.cpp", dir.path() / "main.o");
  cpp.argv.insert(cpp.argv.end(), {"-DTORCH_EXTENSION_NAME=third_ext", "-Xcompiler", "-include," + cpp_header->string(),
                                   "-Xcompiler", "-H"});
  auto cpp_compile = std::async(std::launch::async, [&cpp] { return run_command(cpp, std::chrono::seconds(300)); });
  dir.write("cuda.cu", std::string(kCudaImplicitHeaders) + cuda_call("third_ext", "-x[i]").cuda_sources[0]);
  SpawnOptions so;
  so.argv = candidate_compile_argv(setup, "cuda.cu", "cuda.o");
  so.cwd = dir.str();
  so.env_set = {"TMPDIR=" + dir.str()};
  bool used = false;
  SplitOptions split;
  split.module_id = prefix->module_id;
  split.before_host_compile = [&](HostCompile& hc) {
    used = use_cuda_prefix(hc.source, *prefix);
    hc.command += " -H";
  };
  const RunResult cu = run_nvcc_split(so, limits(), dir.path() / "nvcc", split);
  INFO(cu.output.substr(0, 4000));
  REQUIRE(cu.succeeded());
  CHECK(used);
  CHECK(cu.output.find("! " + prefix->header.string() + ".gch") != std::string::npos);

  const RunResult cr = cpp_compile.get();
  INFO(cr.output.substr(0, 4000));
  REQUIRE(cr.succeeded());
  CHECK(cr.output.find("! " + cpp_header->string() + ".gch") != std::string::npos);
}

TEST_CASE("a cudafe++ output that does not start with the prefix is left as it is") {
  kagent::testing::TempDir dir("kagent-host-pch");
  const fs::path header = dir.write("prefix.h", "int a;\nint b;\n");
  const fs::path other = dir.write("other.cpp", "int a;\nint c;\n");
  CHECK_FALSE(use_cuda_prefix(other, CudaPrefixPch{"id", header}));
  CHECK(file_bytes(other) == "int a;\nint c;\n");
  const fs::path same = dir.write("same.cpp", "int a;\nint b;\nint d;\n");
  CHECK(use_cuda_prefix(same, CudaPrefixPch{"id", header}));
  CHECK(file_bytes(same) == "#include \"" + header.string() + "\"\nint d;\n");
}

TEST_CASE("an answer that needs more than the slim torch/extension.h builds with the lite one") {
  // at::globalContext() is declared in ATen/Context.h, which every ATen/ops/<op>.h includes
  // (so the lite header has it) and the slim one leaves out.
  InlineCall c = cuda_call("context_ext", "x[i]");
  c.cuda_sources[0] += "bool deterministic() { return at::globalContext().deterministicAlgorithms(); }\n";
  const InlineBuild b = compile_inline_extension(c, kagent::testing::prepared_inline_options());
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log.substr(0, 3000));
  REQUIRE(b.fallback.empty());
  CHECK(b.info.ok);
  CHECK(b.info.log.find("kagent: rebuilt with the lite torch/extension.h (the build with the slim one failed)") !=
        std::string::npos);
  // Both attempts' processes are in the record, the failed one's named by its header.
  CHECK(has_step(b.info, "slim header: cuda.cu cicc"));
  CHECK(has_step(b.info, "cuda.cu cicc"));
}
