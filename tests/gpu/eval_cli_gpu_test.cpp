// `kagent eval` as a user runs it, once for each exit status of the README's table that needs a
// GPU: the binary, a candidate of the verdict or guard suite, and the status it exits with. The
// statuses a machine without a GPU reaches are in tests/cli/eval_cli_test.cpp. Skips, saying
// why, without a GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/files.h"

#include "kagent_process.h"
#include "result/exit_status.h"
#include "temp_dir.h"

using namespace kagent;
using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

// problem and candidate of the entry `name` of a suite's manifest.json.
std::pair<std::string, std::string> manifest_entry(const std::string& manifest, const std::string& name) {
  const fs::path root = KAGENT_SOURCE_DIR;
  for (const auto& e : nlohmann::json::parse(read_file(root / manifest)))
    if (e["name"] == name)
      return {(root / e["problem"].get<std::string>()).string(), (root / e["candidate"].get<std::string>()).string()};
  FAIL(manifest << " has no entry " << name);
  return {};
}

}  // namespace

TEST_CASE("kagent eval: each verdict that needs a GPU exits with its status") {
  const TempDir dir("kagent-eval-cli-gpu");
  const std::string verdicts = "tests/gpu/kernels/manifest.json", hacks = "tests/gpu/hacks/manifest.json";
  struct Case {
    std::pair<std::string, std::string> files;
    int status;
    std::vector<std::string> flags = {};
  };
  const auto correct = manifest_entry(verdicts, "gelu_correct");
  const Case cases[] = {
      {correct, exit_status::kCorrect},
      {manifest_entry(verdicts, "wrong_scale"), exit_status::kWrong},
      {manifest_entry(verdicts, "two_outputs"), exit_status::kOutputCount},
      {manifest_entry(verdicts, "oob_write"), exit_status::kRuntimeError},
      {manifest_entry(verdicts, "infinite_loop"), exit_status::kTimeout},
      {manifest_entry(verdicts, "host_segfault"), exit_status::kCrash},
      {{correct.first, dir.write("no_model_new.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n")},
       exit_status::kInvalidCandidate},
      {manifest_entry(hacks, "decoy_kernel"), exit_status::kRejected},
      // cuBLAS does the GEMM: KernelBench's rules (the default policy) allow it, strict does not.
      {manifest_entry(hacks, "cublas_gemm"), exit_status::kCorrect},
      {manifest_entry(hacks, "cublas_gemm"), exit_status::kRejected, {"--policy", "strict"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.files.second);
    // The compile cache outlives the test (the build folder): a second run compiles nothing.
    std::vector<std::string> args = {"eval", c.files.first, c.files.second, "--timeout", "30", "--no-baselines",
                                     "--no-profile"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const KagentRun r = run_kagent(args,
                                   {"KAGENT_CACHE_DIR=" + std::string(KAGENT_BINARY_DIR) + "/test-cache/eval-cli-gpu"},
                                   dir.str());
    INFO(r.out);
    INFO(r.err);
    CHECK(r.status == c.status);
  }
}
