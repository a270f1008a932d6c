// kagent's light <torch/extension.h> tiers (compiler/extension_shim.h) without a compiler: the
// slim tier's operators are torch's own inline functions, cut from the installed headers (or, in
// a made-up include folder, from what is there), and the tiers' include lines.
#include <chrono>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "build_info.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"
#include "compiler/extension_shim.h"
#include "compiler/micro_header.h"
#include "temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {
// One attempt of build_over_tiers in these tests: its record and errors, no compiler.
struct FakeAttempt {
  CompileInfo info;
  std::vector<Diagnostic> errors;
};
CompileInfo& info_of(FakeAttempt& f) { return f.info; }
}  // namespace

TEST_CASE("the slim tier's operators are torch's inline functions without what their headers include") {
  const auto text = slim_ops_text(fs::path(build::kTorchPrefix) / "include");
  REQUIRE(text);
  // zeros_like as torch generates it, over its declaration, without Context.h and the rest.
  CHECK(text->find("#include <ATen/ops/zeros_like_ops.h>") != std::string::npos);
  CHECK(text->find("inline at::Tensor zeros_like(const at::Tensor & self, at::TensorOptions options={}") !=
        std::string::npos);
  CHECK(text->find("#include <ATen/Context.h>") == std::string::npos);
  CHECK(text->find("#include <ATen/DeviceGuard.h>") == std::string::npos);
  CHECK(text->find("#error") == std::string::npos);
  // from_blob.h is hand-written (no generated declaration): included whole.
  CHECK(text->find("#include <ATen/ops/from_blob.h>") != std::string::npos);

  const std::string slim = extension_shim_includes(ShimTier::Slim);
  CHECK(slim.find("#include <ATen/core/Tensor.h>") != std::string::npos);
  CHECK(slim.find(std::string("#include <") + std::string(kSlimOpsHeader) + ">") != std::string::npos);
  CHECK(extension_shim_text(ShimTier::Slim).find(slim) != std::string::npos);
  CHECK(extension_shim_includes(ShimTier::Lite).find("#include <ATen/ops/zeros_like.h>") != std::string::npos);
  CHECK(extension_shim_includes(ShimTier::ATen) == "#include <ATen/ATen.h>\n");
}

TEST_CASE("a torch without an operator's header has no slim tier") {
  kagent::testing::TempDir dir("kagent-shim");
  dir.write("ATen/ops/empty.h", "#pragma once\n");
  CHECK_FALSE(slim_ops_text(dir.path()));
}

TEST_CASE("a file that includes torch/types.h and torch/extension.h gets the shim's names once, whatever their times") {
  // Every cuda.cu includes torch/types.h (load_inline's implicit header) and most answers
  // torch/extension.h. The shim's text is in one file the three torch/*.h include: copies of
  // it relied on gcc's #pragma once taking identical files for one, which it does only when
  // their mtimes fall in the same second.
  kagent::testing::TempDir dir("kagent-shim-once");
  CompileCache cache(dir.path() / "cache");
  const fs::path shim = ensure_shim(cache, ShimTier::Lite);
  const auto t = fs::last_write_time(shim / "torch" / "extension.h");
  fs::last_write_time(shim / "torch" / "types.h", t - std::chrono::seconds(5));
  dir.write("cuda.cpp", "#include <torch/types.h>\n#include <torch/extension.h>\n");
  const fs::path torch_include = fs::path(build::kTorchPrefix) / "include";
  SpawnOptions so;
  so.argv = {"g++", "-std=c++17", "-E", "-P", "-I" + shim.string(), "-I" + torch_include.string(),
             "-I" + (torch_include / "torch" / "csrc" / "api" / "include").string(), (dir.path() / "cuda.cpp").string(),
             "-o", (dir.path() / "cuda.ii").string()};
  const RunResult r = run_command(so, std::chrono::seconds(300));
  INFO(r.output.substr(0, 2000));
  REQUIRE(r.succeeded());
  const std::string pre = read_file(dir.path() / "cuda.ii");
  size_t n = 0;
  for (size_t at = pre.find("kUInt8 = at::kByte"); at != std::string::npos; at = pre.find("kUInt8 = at::kByte", at + 1)) ++n;
  CHECK(n == 1);
}

TEST_CASE("a file that includes ATen's operator headers skips the slim tier, whose operators they define again") {
  // Slim's build of such a file always fails (`function "at::add" has already been defined`):
  // one real answer of 149 includes <ATen/ATen.h> and paid a whole failed compile for it.
  CHECK(header_clashing_with_slim("#include <torch/extension.h>\n#include <ATen/ATen.h>\n") == "ATen/ATen.h");
  CHECK(header_clashing_with_slim("#include <torch/all.h>\n") == "torch/all.h");
  CHECK(header_clashing_with_slim("#  include \"ATen/Functions.h\"\n") == "ATen/Functions.h");
  CHECK(header_clashing_with_slim("#include <ATen/ops/zeros_like.h>\n") == "ATen/ops/zeros_like.h");
  // An operator Slim does not carry, and the CUDA headers answers include, do not clash.
  CHECK(header_clashing_with_slim("#include <ATen/ops/cumsum.h>\n").empty());
  CHECK(header_clashing_with_slim("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
                                  "#include <c10/cuda/CUDAGuard.h>\n#include <ATen/core/Tensor.h>\n")
            .empty());
  CHECK(header_clashing_with_slim("// #include <ATen/ATen.h> is not needed\n").empty());

  // The tiers then start at Lite, and the record says why.
  std::vector<ShimTier> tried;
  auto build = [&](ShimTier t) {
    tried.push_back(t);
    FakeAttempt f;
    f.info.ok = true;
    return f;
  };
  const FakeAttempt a = build_over_tiers(ShimTier::Slim, "#include <torch/extension.h>\n#include <ATen/ATen.h>\n",
                                  fs::path(build::kTorchPrefix), build, info_of);
  CHECK(tried == std::vector<ShimTier>{ShimTier::Lite});
  CHECK(a.info.log.find("built with the lite torch/extension.h (the slim one defines operator functions that "
                        "<ATen/ATen.h> defines too)") != std::string::npos);
  tried.clear();
  build_over_tiers(ShimTier::Slim, "#include <torch/extension.h>\n", fs::path(build::kTorchPrefix), build,
                   info_of);
  CHECK(tried == std::vector<ShimTier>{ShimTier::Slim});
}

TEST_CASE("slim errors that Lite cannot mend lead to ATen at once; the others to Lite") {
  const fs::path torch = build::kTorchPrefix;
  const std::string src = "#include <torch/extension.h>\n";
  auto after_slim = [&](const std::string& message) {
    Diagnostic d;
    d.message = message;
    return next_tier(ShimTier::Slim, src, {d}, torch);
  };
  // `1 - t` (l1_p97_llama31405b): ATen/TensorOperators.h, in neither Slim nor Lite.
  CHECK(after_slim("no operator \"-\" matches these operands operand types are: int - at::Tensor") == ShimTier::ATen);
  // An ATen function that is not a common operator: Lite lacks it too.
  CHECK(after_slim("namespace \"torch\" has no member \"cumsum\"") == ShimTier::ATen);
  CHECK(after_slim("identifier \"cumsum\" is undefined") == ShimTier::ATen);
  // What Lite adds (Context.h's names), a common operator, or the answer's own error: Lite, as before.
  CHECK(after_slim("namespace \"at\" has no member \"globalContext\"") == ShimTier::Lite);
  CHECK(after_slim("namespace \"torch\" has no member \"zeros_like\"") == ShimTier::Lite);
  CHECK(after_slim("identifier \"blockDimx\" is undefined") == ShimTier::Lite);
  // A file that does not include a header the shim replaces is never retried.
  CHECK_FALSE(next_tier(ShimTier::Slim, "#include <cuda_runtime.h>\n", {}, torch));
}

TEST_CASE("the micro header lets through only the three headers the shim replaces") {
  CHECK(includes_only_shimmed_torch_headers("#include <torch/extension.h>\n#include <cuda_runtime.h>\n#include <vector>\n"));
  CHECK(includes_only_shimmed_torch_headers("#include <torch/types.h>\n  # include \"torch/torch.h\"\n"));
  CHECK_FALSE(includes_only_shimmed_torch_headers("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"));
  CHECK_FALSE(includes_only_shimmed_torch_headers("#include <c10/cuda/CUDAGuard.h>\n"));
  CHECK_FALSE(includes_only_shimmed_torch_headers("#include <torch/script.h>\n"));
  CHECK_FALSE(includes_only_shimmed_torch_headers("#include <pybind11/pybind11.h>\n"));
  CHECK_FALSE(includes_only_shimmed_torch_headers("#include <Python.h>\n"));
}

TEST_CASE("whatever fails with the micro header is built with the slim one; a Micro-first build tries Micro, then Slim") {
  const fs::path torch = build::kTorchPrefix;
  const std::string src = "#include <torch/extension.h>\n";
  Diagnostic d;
  d.message = "class \"at::Tensor\" has no member \"mean\"";
  CHECK(next_tier(ShimTier::Micro, src, {d}, torch) == first_light_tier(true));
  CHECK(next_tier(ShimTier::Micro, src, {}, torch) == first_light_tier(true));  // a link or symbol failure: no errors
  CHECK_FALSE(next_tier(ShimTier::Micro, "#include <cuda_runtime.h>\n", {}, torch));
  // The micro shim's header includes no torch header: what micro_tensor.h declares is all it has.
  CHECK(extension_shim_includes(ShimTier::Micro) == "#include <kagent/micro_tensor.h>\n");
  CHECK(micro_header_text().find("#include <ATen") == std::string_view::npos);
  CHECK(micro_header_text().find("#include <c10") == std::string_view::npos);
  CHECK(micro_header_text().find("#include <torch") == std::string_view::npos);

  std::vector<ShimTier> tried;
  auto build = [&](ShimTier t) {
    tried.push_back(t);
    FakeAttempt f;
    f.info.ok = t != ShimTier::Micro;  // the micro build fails, with no errors (a symbol the binding lacks)
    f.info.steps = {{"cuda.cu cudafe++", 1.0, 1.0}};
    return f;
  };
  const FakeAttempt a = build_over_tiers(ShimTier::Micro, src, torch, build, info_of);
  CHECK(tried == std::vector<ShimTier>{ShimTier::Micro, first_light_tier(true)});
  CHECK(a.info.ok);
  CHECK(a.info.log.find(fmt::format("kagent: rebuilt with the {} torch/extension.h (the build with the micro one failed)",
                                    to_string(first_light_tier(true)))) == 0);
  REQUIRE(a.info.steps.size() == 2);
  CHECK(a.info.steps[0].name == "micro header: cuda.cu cudafe++");  // its CPU counts too
}

TEST_CASE("the micro header and its support library spell the types they pass each other the same way") {
  // The two are compiled in different worlds (no torch header, the real ones), so they cannot
  // share a header; what crosses between them must be written the same in both.
  auto block = [](std::string_view text, std::string_view start) -> std::string {
    const size_t from = text.find(start);
    if (from == std::string_view::npos) return {};
    return std::string(text.substr(from, text.find("};", from) + 2 - from));
  };
  for (std::string_view start : {"struct Options {", "enum class Get ", "enum class Make ", "enum class Shape ",
                                 "enum class Factory ", "enum class Like ", "enum class Ptr "}) {
    INFO(start);
    const std::string header = block(micro_header_text(), start);
    CHECK_FALSE(header.empty());
    CHECK(header == block(micro_support_source(), start));
  }
}
