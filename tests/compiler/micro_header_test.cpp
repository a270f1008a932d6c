// The micro <torch/extension.h> (compiler/micro_header.h), with real nvcc and the worker's own
// loader on the CPU: an answer that uses only what the micro header declares is built without any
// torch header, and its functions run through the shared binding with torch's results and torch's
// errors; an answer that uses more is built with the slim header, with the outcome it always had.
#include <filesystem>
#include <future>
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
#include "inline_cache_for_tests.h"
#include "inline_call_for_tests.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

const kagent::testing::TempDir kAnswers("kagent-micro-answers");

std::string answer_file(const std::string& name, const std::string& cpp, const std::string& cuda,
                        const std::string& function) {
  return kagent::testing::inline_answer_file(kAnswers.str(), name, cpp, cuda, function);
}

// The prepared cache of the whole executable (inline_cache_for_tests.h).
CompileOptions cache_options() { return kagent::testing::prepared_inline_options(); }

InlineBuild build_call(const InlineCall& call, CompileOptions options = cache_options()) {
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
  // Switched off (CompileOptions::micro_header, $KAGENT_MICRO_HEADER=0), checked last: that build
  // does not depend on the rest, so it runs beside it.
  auto slim_build = std::async(std::launch::async, [&call] {
    CompileOptions off = cache_options();
    off.micro_header = false;
    return build_call(call, off);
  });
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

  // Switched off: the slim header, another entry.
  const InlineBuild slim = slim_build.get();
  CHECK(slim.info.ok);
  CHECK_FALSE(slim.info.cache_hit);
  for (const auto& e : fs::directory_iterator(fs::path(slim.info.artifact).parent_path()))
    CHECK(e.path().filename().string().rfind("libkagent_micro_", 0) != 0);
}

TEST_CASE("an answer that uses more than the micro header has is built with the slim one, with the same outcome") {
  // The broken answer checked below is built beside this one (they do not depend on each other).
  auto broken = std::async(std::launch::async, [] { return &kagent::testing::broken_cuda_answer(); });
  // A Tensor method and a reduction: torch has them, the micro header does not. Methods, not the
  // operator (`x - x.mean()` before): slim has no Tensor operators either, so that answer went on
  // past slim to a third compile with the ATen header, and this case never saw slim hold.
  const std::string f = answer_file("micro_more", "torch::Tensor centred(torch::Tensor x);",
                                    "torch::Tensor centred(torch::Tensor x) {\n  return x.sub(x.mean());\n}\n", "centred");
  const InlineCall call = kagent::testing::only_call(f);
  const InlineBuild b = build_call(call);
  REQUIRE(b.info.ok);
  CHECK(b.info.log.find("kagent: rebuilt with the slim torch/extension.h (the build with the micro one failed)") == 0);
  CHECK(has_step(b, "micro header: cuda.cu"));
  CHECK_FALSE(has_step(b, "slim header:"));  // slim held: no later tier
  const RunResult r = run_answer(f, call, b, R"py(
x = torch.tensor([1.0, 2.0, 6.0])
assert torch.equal(ext.centred(x), x - 3.0)
)py");
  INFO(r.output);
  CHECK(r.exit.code == 0);

  // The answer's own error is the slim tier's, as before: its line, and nothing of the micro header.
  // The answer and its build are shared_binding_test.cpp's too (inline_cache_for_tests.h): one
  // build on the one path both check (micro, slim, lite), each for what it is about.
  const InlineBuild& be = broken.get()->build;
  INFO("errors: " << be.info.errors << "\nlog: " << be.info.log);
  CHECK(has_step(be, "micro header: cuda.cu"));  // tried with the micro header first
  CHECK_FALSE(be.info.ok);
  CHECK(be.fallback.empty());
  CHECK(be.info.errors.find("broken_cuda_ext/cuda.cu:5:") != std::string::npos);
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

TEST_CASE("the lean micro header is the default; code that names a stream, std::function or the like gets the full one") {
  // Plain kernels, the standard names answers take for granted, and words in comments and strings.
  CHECK_FALSE(micro_needs_full_std("__global__ void k(float* y) { y[0] = std::min(1.f, fmaxf(2.f, 0.f)); }\n"
                                   "std::vector<int64_t> dims = {1, 2}; printf(\"%d\", (int)std::numeric_limits<int>::max());"));
  CHECK_FALSE(micro_needs_full_std("// the function below returns a map of sizes\n/* std::cout << x; */\n"
                                   "TORCH_CHECK(ok, \"std::function and a tuple in a message\");\nchar c = '\"';"));
  CHECK_FALSE(micro_needs_full_std("torch::Tensor forward(torch::Tensor x) { return x.contiguous(); }"));
  // What only the full one declares, in code.
  for (std::string_view code : {"std::cout << x.sizes() << std::endl;", "std::function<void()> f;", "auto p = std::make_unique<int>(1);",
                                "std::unordered_map<int, int> m;", "auto t = std::make_tuple(1, 2); int a = std::get<0>(t);",
                                "throw std::runtime_error(\"bad\");", "float s = std::accumulate(v.begin(), v.end(), 0.f);",
                                "using namespace std;", "std::ostream& operator<<(std::ostream& o, const Pair& p);",
                                "std::optional<int> o;"})
    CHECK_MESSAGE(micro_needs_full_std(code), code);
}

namespace {
// The folder of the shim an answer's cuda.cu was compiled with (its command's include path).
fs::path shim_folder_of(const InlineBuild& b) {
  const std::string marker = "shim-v2/";
  const std::size_t at = b.info.command.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t begin = b.info.command.rfind(' ', at) + 1;
  const std::size_t end = b.info.command.find_first_of(" '\"", at);
  std::string path = b.info.command.substr(begin, end - begin);
  if (path.rfind("-I", 0) == 0) path = path.substr(2);
  return path;
}
}  // namespace

TEST_CASE("TORCH_CHECK's parts under the lean micro header print as torch prints them") {
  // One message of every kind of part the lean header prints: strings, characters, integers of
  // each width and sign, bool, float and double (the stream's six digits), a ScalarType, a Device,
  // a dtype and sizes.
  const std::string cuda = R"cu(
torch::Tensor parts(torch::Tensor x, double d) {
  const std::string s = "str";
  TORCH_CHECK(x.dim() == 0, "p ", s, ' ', (signed char)66, (unsigned char)67, " ", x.dim(), " ", (int16_t)-5, " ",
              (uint16_t)7, " ", 5000000000LL, " ", (unsigned long long)18446744073709551615ULL, " ", true, " ",
              0.1f, " ", d, " ", 1e-7, " ", 123456789.0, " ", x.scalar_type(), " ", x.device(), " ", x.dtype(), " ",
              x.sizes(), " ", x.strides(), " ", std::string_view("view"));
  return x;
}
)cu";
  const std::string f = answer_file("micro_parts", "torch::Tensor parts(torch::Tensor x, double d);", cuda, "parts");
  const InlineCall call = kagent::testing::only_call(f);
  const std::string check = R"py(
try:
    ext.parts(torch.zeros(2, 3, dtype=torch.float64), 2.0 / 3.0)
    raise AssertionError("no error")
except RuntimeError as e:
    print("MESSAGE<" + str(e).splitlines()[0] + ">")
)py";
  auto message = [](const RunResult& r) {
    const std::size_t b = r.output.find("MESSAGE<"), e = r.output.find(">\n", b);
    return b == std::string::npos || e == std::string::npos ? std::string() : r.output.substr(b + 8, e - b - 8);
  };
  // The slim build (checked second) does not depend on the lean one: it runs beside it.
  auto slim_build = std::async(std::launch::async, [&call] {
    CompileOptions off = cache_options();
    off.micro_header = false;  // the slim header: torch's own TORCH_CHECK and stream
    return build_call(call, off);
  });
  const InlineBuild lean = build_call(call);
  REQUIRE(lean.info.ok);
  CHECK(lean.info.log.find("rebuilt") == std::string::npos);  // held at micro, lean
  CHECK(read_file_or_empty(shim_folder_of(lean) / kShimHeader).find("KAGENT_MICRO_FULL_STD") == std::string::npos);
  const RunResult lr = run_answer(f, call, lean, check);
  INFO(lr.output);
  REQUIRE(lr.exit.code == 0);

  const InlineBuild slim = slim_build.get();
  REQUIRE(slim.info.ok);
  const RunResult sr = run_answer(f, call, slim, check);
  INFO(sr.output);
  REQUIRE(sr.exit.code == 0);
  CHECK(message(lr) == "p str BC 2 -5 7 5000000000 18446744073709551615 1 0.1 0.666667 1e-07 1.23457e+08 Double cpu double [2, 3] [3, 1] view");
  CHECK(message(lr) == message(sr));
}

TEST_CASE("an answer whose CUDA code names std::function is built at micro with the full standard headers") {
  const std::string cuda = R"cu(
#include <functional>
torch::Tensor applied(torch::Tensor x) {
  std::function<torch::Tensor(const torch::Tensor&)> f = [](const torch::Tensor& t) { return t.clone(); };
  std::ostringstream why;  // <sstream> came with the micro header before the lean one: still there
  why << x.sizes();
  TORCH_CHECK(x.dim() == 1, "want 1-D, got ", why.str());
  return f(x);
}
)cu";
  const std::string f = answer_file("micro_full_std", "torch::Tensor applied(torch::Tensor x);", cuda, "applied");
  const InlineCall call = kagent::testing::only_call(f);
  const InlineBuild b = build_call(call);
  REQUIRE(b.info.ok);
  CHECK(b.info.log.find("rebuilt") == std::string::npos);
  CHECK_FALSE(has_step(b, "micro header:"));
  CHECK(read_file_or_empty(shim_folder_of(b) / kShimHeader).rfind(std::string(kMicroFullStdDefine), 0) == 0);
  const RunResult r = run_answer(f, call, b, R"py(
assert torch.equal(ext.applied(torch.arange(3.0)), torch.arange(3.0))
try:
    ext.applied(torch.zeros(2, 2))
    raise AssertionError("no error")
except RuntimeError as e:
    assert "want 1-D, got [2, 2]" in str(e), str(e)
)py");
  INFO(r.output);
  CHECK(r.exit.code == 0);
}
