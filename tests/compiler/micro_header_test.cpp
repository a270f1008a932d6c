// The micro <torch/extension.h> (compiler/micro_header.h), with real nvcc and the worker's own
// loader on the CPU: an answer that uses only what the micro header declares is built without any
// torch header, and its functions run through the shared binding with torch's results and torch's
// errors; an answer that uses more is built with the slim header, with the outcome it always had.
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "build_info.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/inline_call_reader.h"
#include "compiler/inline_extension_compiler.h"
#include "compiler/micro_header.h"
#include "compile_cache_for_tests.h"
#include "inline_answer_for_tests.h"
#include "inline_call_for_tests.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

const kagent::testing::TempDir kCache("kagent-micro-test");
const kagent::testing::TempDir kAnswers("kagent-micro-answers");

std::string answer_file(const std::string& name, const std::string& cpp, const std::string& cuda,
                        const std::string& function) {
  return kagent::testing::inline_answer_file(kAnswers.str(), name, cpp, cuda, function);
}

InlineBuild build_call(const InlineCall& call, CompileOptions options = kagent::testing::compile_options(kCache)) {
  const InlineBuild b = compile_inline_extension(call, options);
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log);
  return b;
}

bool has_step(const InlineBuild& b, const std::string& prefix) {
  for (const auto& st : b.info.steps)
    if (st.name.rfind(prefix, 0) == 0) return true;
  return false;
}

RunResult run_answer(const std::string& file, const InlineCall& call, const InlineBuild& b, const std::string& check) {
  return kagent::testing::run_inline_answer(file, call, b, check);
}

// A CPU function in the answers' style: sizes, options, the factories, data pointers and checks.
constexpr std::string_view kMicroCuda = R"cu(
__global__ void scale_kernel(const float* x, float* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i];
}

std::vector<torch::Tensor> scaled(torch::Tensor x, double s) {
  TORCH_CHECK(x.dim() == 2, "x must be 2-D, got ", x.dim(), " dims of ", x.sizes());
  TORCH_CHECK(s != 0.0);
  auto c = x.contiguous();
  auto y = torch::zeros_like(c);
  auto rows = torch::empty({c.size(0)}, c.options().dtype(torch::kInt64));
  const float* px = c.data_ptr<float>();
  float* py = y.data_ptr<float>();
  int64_t* pr = rows.data_ptr<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) py[i] = static_cast<float>(s) * px[i];
  for (int64_t r = 0; r < c.size(-2); ++r) pr[r] = r * c.stride(0);
  torch::Tensor copy = y;  // a copy and a move, as answers make them
  torch::Tensor moved = std::move(copy);
  return {moved.view({-1}), rows};
}
)cu";

}  // namespace

TEST_CASE("an answer that uses only the micro header's Tensor is built without torch's headers and runs as torch's") {
  const std::string f =
      answer_file("micro_ok", "std::vector<torch::Tensor> scaled(torch::Tensor x, double s);", std::string(kMicroCuda), "scaled");
  const InlineCall call = kagent::testing::only_call(f);
  const InlineBuild b = build_call(call);
  REQUIRE(b.info.ok);
  REQUIRE_FALSE(b.binding.empty());
  CHECK(b.info.log.find("rebuilt") == std::string::npos);
  // Nothing of the header in the log the model reads (a system header, as torch's are: its
  // ArrayRef from a braced list warned in 62 of the 149 real answers' logs before).
  CHECK(b.info.log.find("micro_tensor.h") == std::string::npos);
  CHECK_FALSE(has_step(b, "micro header:"));  // no failed micro attempt before
  CHECK_FALSE(has_step(b, "slim header:"));
  // The support library's copy sits beside the answer's, and the library needs it by that name.
  std::string support;
  for (const auto& e : fs::directory_iterator(fs::path(b.info.artifact).parent_path()))
    if (e.path().filename().string().rfind("libkagent_micro_", 0) == 0) support = e.path().filename().string();
  REQUIRE_FALSE(support.empty());
  SpawnOptions readelf;
  readelf.argv = {"readelf", "-d", b.info.artifact};
  const RunResult dyn = run_command(readelf, std::chrono::seconds(30));
  CHECK(dyn.output.find("[" + support + "]") != std::string::npos);
  CHECK(dyn.output.find("$ORIGIN") != std::string::npos);

  const RunResult r = run_answer(f, call, b, R"py(
x = torch.arange(6, dtype=torch.float32).view(2, 3)
y, rows = ext.scaled(x.t().contiguous().t(), 2.0)
assert torch.equal(y, (2 * x).reshape(-1)), y
assert rows.dtype == torch.int64 and rows.tolist() == [0, 3], rows
# torch's own checks and messages, raised through the answer's frames
for bad, want in [(torch.zeros(3), "x must be 2-D, got 1 dims of [3]"),
                  (torch.zeros(2, 2, dtype=torch.float64), "expected scalar type Float but found Double")]:
    try:
        ext.scaled(bad, 1.0)
        raise AssertionError("no error for " + want)
    except RuntimeError as e:
        assert want in str(e), str(e)
try:
    ext.scaled(x, 0.0)
    raise AssertionError("no error for s == 0")
except RuntimeError as e:
    assert "Expected s != 0.0 to be true, but got false." in str(e), str(e)
)py");
  INFO(r.output);
  CHECK(r.exit.code == 0);
  CHECK(r.output.find(R"("name": "micro_ok", "built_by": "kagent")") != std::string::npos);

  // Switched off (CompileOptions::micro_header, $KAGENT_MICRO_HEADER=0): the slim header, another entry.
  CompileOptions off = kagent::testing::compile_options(kCache);
  off.micro_header = false;
  const InlineBuild slim = build_call(call, off);
  CHECK(slim.info.ok);
  CHECK_FALSE(slim.info.cache_hit);
  for (const auto& e : fs::directory_iterator(fs::path(slim.info.artifact).parent_path()))
    CHECK(e.path().filename().string().rfind("libkagent_micro_", 0) != 0);
}

TEST_CASE("an answer that uses more than the micro header has is built with the slim one, with the same outcome") {
  // A Tensor operator and a reduction: torch has them, the micro header does not.
  const std::string f = answer_file("micro_more", "torch::Tensor centred(torch::Tensor x);",
                                    "torch::Tensor centred(torch::Tensor x) {\n  return x - x.mean();\n}\n", "centred");
  const InlineCall call = kagent::testing::only_call(f);
  const InlineBuild b = build_call(call);
  REQUIRE(b.info.ok);
  CHECK(b.info.log.find("kagent: rebuilt with the slim torch/extension.h (the build with the micro one failed)") == 0);
  CHECK(has_step(b, "micro header: cuda.cu"));
  const RunResult r = run_answer(f, call, b, R"py(
x = torch.tensor([1.0, 2.0, 6.0])
assert torch.equal(ext.centred(x), x - 3.0)
)py");
  INFO(r.output);
  CHECK(r.exit.code == 0);

  // The answer's own error is the slim tier's, as before: its line, and nothing of the micro header.
  const std::string e = answer_file("micro_broken", "torch::Tensor neg(torch::Tensor x);",
                                    "torch::Tensor neg(torch::Tensor x) {\n  return x.neg() + undefined_name;\n}\n", "neg");
  const InlineBuild be = build_call(kagent::testing::only_call(e));
  CHECK_FALSE(be.info.ok);
  CHECK(be.fallback.empty());
  CHECK(be.info.errors.find("micro_broken/cuda.cu:5:") != std::string::npos);
  CHECK(be.info.errors.find("undefined_name") != std::string::npos);
  CHECK(be.info.errors.find("micro_tensor.h") == std::string::npos);
}

TEST_CASE("an answer that includes another torch header is never tried with the micro one") {
  const std::string f = answer_file("micro_never",
                                    "torch::Tensor twice(torch::Tensor x);",
                                    "#include <c10/util/Exception.h>\n"
                                    "torch::Tensor twice(torch::Tensor x) {\n  return x.mul(2);\n}\n",
                                    "twice");
  const InlineBuild b = build_call(kagent::testing::only_call(f));
  CHECK(b.info.ok);
  CHECK_FALSE(has_step(b, "micro header:"));
  CHECK(b.info.log.find("rebuilt") == std::string::npos);
}
