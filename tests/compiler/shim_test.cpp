// kagent's light <torch/extension.h> tiers (compiler/extension_shim.h) without a compiler: the
// slim tier's operators are torch's own inline functions, cut from the installed headers (or, in
// a made-up include folder, from what is there), and the tiers' include lines.
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "build_info.h"
#include "compiler/extension_shim.h"
#include "temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

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
