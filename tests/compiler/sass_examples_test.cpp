// The SASS summary of real compiles (nvcc and cuobjdump run without a GPU): the shipped
// examples, the float4 and scalar kernels of the GELU example told apart, a WMMA kernel's
// tensor-core instructions, a candidate with no device code that still compiles, its SASS
// reported missing with the reason; and cuobjdump finding nvdisasm in another folder than its
// own with PATH naming neither (a toolkit with only nvcc, the tools from PyPI wheels).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

#include "build_info.h"
#include "common/gzip_file.h"
#include "common/subprocess.h"
#include "compiler/native_compiler.h"
#include "compiler/sass_dump.h"
#include "support/temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TensorArg tensor(const std::string& name, const std::string& dtype, std::vector<int64_t> shape) {
  std::string cpp = name;
  for (char& c : cpp)
    if (c == '.') c = '_';
  return {name, cpp, ArgKind::Tensor, dtype, std::move(shape), false, ""};
}

ProblemSpec spec(std::vector<TensorArg> inputs, std::vector<TensorArg> params = {}) {
  ProblemSpec s;
  s.name = "sass_test";
  s.inputs = std::move(inputs);
  s.params = std::move(params);
  s.outputs.push_back({"float32", {16}});
  return s;
}

CompileInfo compile_example(const ProblemSpec& s, const std::string& file, const fs::path& cache) {
  CompileOptions o;
  o.cache_dir = cache.string();
  o.display_name = fs::path(file).filename().string();
  CompileInfo info = compile_native(s, read_text(file), o);
  INFO(info.errors);
  REQUIRE(info.ok);
  REQUIRE(info.sass.has_value());
  INFO(info.sass->missing_reason);
  REQUIRE(info.sass->available);
  CHECK(info.sass->arch == "sm_90a");
  // the stored disassembly opens and holds the listed kernels
  const std::string text = read_gzip_file(info.sass->file);
  for (const auto& k : info.sass->kernels) CHECK(text.find("Function : " + k.mangled) != std::string::npos);
  return info;
}

const SassKernel& kernel_named(const CompileInfo& info, const std::string& prefix) {
  for (const auto& k : info.sass->kernels)
    if (k.kernel.find(prefix + "(") != std::string::npos || k.kernel.find(prefix + "<") != std::string::npos) return k;
  FAIL("no kernel " << prefix);  // throws
  return info.sass->kernels.front();
}

// Sets an environment variable for a scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("SASS of the shipped examples and a WMMA kernel") {
  testing::TempDir cache("kagent-sass-cache");
  const std::string ex = std::string(KAGENT_SOURCE_DIR) + "/examples/";

  SUBCASE("elementwise_gelu: the float4 kernel and the scalar tail told apart") {
    const CompileInfo info = compile_example(spec({tensor("x", "float32", {4096, 8192})}), ex + "elementwise_gelu.cu",
                                             cache.path());
    REQUIRE(info.sass->kernels.size() == 2);
    const SassKernel& vec = kernel_named(info, "gelu_vec4_kernel");
    const SassKernel& scalar = kernel_named(info, "gelu_scalar_kernel");
    CHECK(vec.global_loads.at("128") >= 1);
    CHECK(vec.global_stores.at("128") >= 1);
    CHECK(vec.scalar_global_accesses() == 0);
    CHECK(scalar.vector_global_accesses() == 0);
    CHECK(scalar.global_loads.at("32") >= 1);
    CHECK(scalar.global_stores.at("32") >= 1);
    CHECK(vec.tensor.empty());
    CHECK(vec.local_loads + vec.local_stores == 0);
    CHECK(vec.registers > 0);
  }
  SUBCASE("gemm_bias_relu: FP32 FMAs from shared memory, no tensor cores, barriers, a loop") {
    const CompileInfo info = compile_example(
        spec({tensor("x", "float32", {1024, 4096})}, {tensor("linear.weight", "float32", {4096, 4096}),
                                                      tensor("linear.bias", "float32", {4096})}),
        ex + "gemm_bias_relu.cu", cache.path());
    bool found = false;
    for (const auto& k : info.sass->kernels) {
      if (k.ffma < 512) continue;  // the main kernel: an 8x8 tile per thread over a k-loop
      found = true;
      CHECK(k.tensor.empty());
      CHECK(k.shared_loads.count("128") == 1);
      CHECK(k.barriers >= 1);
      CHECK(k.loops >= 1);
      CHECK(k.shared_bytes > 0);
      CHECK(k.local_in_loops == 0);
    }
    CHECK(found);
  }
  SUBCASE("row_softmax (float4 and scalar instantiations told apart) and conv_block summarise") {
    const CompileInfo softmax =
        compile_example(spec({tensor("x", "float32", {2048, 16384})}), ex + "row_softmax.cu", cache.path());
    CHECK(kernel_named(softmax, "softmax_rows_kernel<true>").global_loads.count("128") == 1);
    CHECK(kernel_named(softmax, "softmax_rows_kernel<true>").global_stores.count("128") == 1);
    CHECK(kernel_named(softmax, "softmax_rows_kernel<false>").vector_global_accesses() == 0);
    const CompileInfo conv = compile_example(
        spec({tensor("x", "float32", {16, 3, 256, 256})},
             {tensor("conv.weight", "float32", {32, 3, 3, 3}), tensor("conv.bias", "float32", {32})}),
        ex + "conv_block.cu", cache.path());
    REQUIRE_FALSE(conv.sass->kernels.empty());
    CHECK(conv.sass->kernels.front().ffma > 0);
  }
  SUBCASE("a WMMA kernel: HMMA instructions with their shape") {
    const CompileInfo info =
        compile_example(spec({tensor("a", "float16", {16, 16}), tensor("b", "float16", {16, 16})}),
                        std::string(KAGENT_SOURCE_DIR) + "/tests/compiler/data/wmma_tile.cu", cache.path());
    const SassKernel& k = kernel_named(info, "wmma_tile_kernel");
    REQUIRE(k.tensor_instructions() >= 1);
    CHECK(k.tensor.begin()->first.rfind("HMMA.", 0) == 0);
    CHECK(k.ffma == 0);
  }
}

TEST_CASE("a candidate without device code compiles; its SASS is missing, with the reason") {
  testing::TempDir cache("kagent-sass-cache");
  const char* no_kernel = R"cu(#include <ATen/ATen.h>
at::Tensor forward(at::Tensor x) { return at::relu(x); }
)cu";
  CompileOptions o;
  o.cache_dir = cache.path().string();
  const CompileInfo info = compile_native(spec({tensor("x", "float32", {16})}), no_kernel, o);
  INFO(info.errors);
  REQUIRE(info.ok);
  REQUIRE(info.sass.has_value());
  CHECK_FALSE(info.sass->available);
  INFO(info.sass->missing_reason);
  // nvcc embeds an empty fatbin (cuobjdump lists no function) or none at all (cuobjdump says so)
  CHECK((info.sass->missing_reason.find("no kernel") != std::string::npos ||
         info.sass->missing_reason.find("does not contain device code") != std::string::npos));
  // cached: the same answer again, from the entry
  const CompileInfo again = compile_native(spec({tensor("x", "float32", {16})}), no_kernel, o);
  CHECK(again.cache_hit);
  CHECK(again.sass->missing_reason == info.sass->missing_reason);
}

TEST_CASE("cuobjdump alone in its folder, PATH without nvdisasm: kagent hands it the nvdisasm it found") {
  // How a fresh machine ends up: a toolkit with nvcc only, cuobjdump and nvdisasm from PyPI
  // wheels or elsewhere. cuobjdump looks for nvdisasm on PATH and beside itself only.
  testing::TempDir tmp("kagent-sass-nvdisasm");
  const std::string cuobjdump = resolve_cuobjdump("");
  REQUIRE_MESSAGE(fs::path(cuobjdump).is_absolute(), "the build found no cuobjdump (scripts/setup.sh installs it)");
  const std::string nvdisasm = resolve_nvdisasm();
  REQUIRE_MESSAGE(fs::path(nvdisasm).is_absolute(), "the build found no nvdisasm (scripts/setup.sh installs it)");
  fs::create_directories(tmp.path() / "alone");
  const fs::path lone = tmp.path() / "alone" / "cuobjdump";
  fs::copy_file(cuobjdump, lone);  // a copy: a link would be followed back to its folder
  fs::permissions(lone, fs::perms::owner_all);
  std::ofstream(tmp.path() / "k.cu") << "__global__ void twice(float* x) { x[threadIdx.x] *= 2.f; }\n";
  SpawnOptions nvcc;
  nvcc.argv = {build::kNvcc, "-c", "-arch=sm_90a", (tmp.path() / "k.cu").string(), "-o", (tmp.path() / "k.o").string()};
  const RunResult compiled = run_command(nvcc, std::chrono::minutes(5));
  INFO(compiled.output);
  REQUIRE(compiled.succeeded());

  ScopedEnv path("PATH", "/usr/bin:/bin");
  SassInfo s = disassemble(tmp.path() / "k.o", tmp.path() / "k.sass.gz", lone.string(), "sm_90a", std::chrono::seconds(60));
  INFO(s.missing_reason);
  CHECK(s.available);
  REQUIRE(s.kernels.size() == 1);
  CHECK(s.kernels.front().kernel.find("twice") != std::string::npos);

  // No nvdisasm anywhere: the reason says where to get one.
  ScopedEnv none("KAGENT_NVDISASM", "nvdisasm-that-is-nowhere");
  s = disassemble(tmp.path() / "k.o", tmp.path() / "k2.sass.gz", lone.string(), "sm_90a", std::chrono::seconds(60));
  CHECK_FALSE(s.available);
  CHECK(s.missing_reason.find("nvidia-cuda-nvdisasm") != std::string::npos);
}
