// Real nvcc compiles (no GPU needed): a good kernel, the cache, errors and reasons, the pool.
// Each compile takes tens of seconds on a small machine, so there are only four.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

#include "build_info.h"
#include "common/subprocess.h"
#include "compiler/compile_pool.h"
#include "compiler/native_compiler.h"
#include "result/eval_result.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

// input x: float32 [1024], one tensor out.
ProblemSpec relu_spec() {
  ProblemSpec s;
  s.name = "19_ReLU";
  s.inputs.push_back({"x", "x", ArgKind::Tensor, "float32", {1024}, false, ""});
  s.outputs.push_back({"float32", {1024}});
  return s;
}

// Written the way load_inline-trained models write: torch/extension.h and a pybind block.
const char* kGoodKernel = R"cu(#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a CUDA float tensor");
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "ReLU (CUDA)"); }
)cu";

const char* kBrokenKernel = R"cu(#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], zero_value);
}

at::Tensor forward(const at::Tensor& x) {
  auto y = at::empty_like(x);
  relu_kernel<<<4, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
)cu";

// abs and Tensor operators are not in the light header: the compile moves to ATen.h.
const char* kNeedsATen = R"cu(#include <torch/extension.h>
__global__ void copy_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
torch::Tensor forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  copy_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return torch::abs(y) + y;
}
)cu";

const char* kMissingForward = R"cu(#include <ATen/ATen.h>
__global__ void k(float* y) { y[threadIdx.x] = 0.f; }
at::Tensor relu_forward(at::Tensor x) { return x; }
)cu";

const char* kWrongSignature = R"cu(#include <ATen/ATen.h>
__global__ void k(float* y) { y[threadIdx.x] = 0.f; }
at::Tensor forward(at::Tensor x, int64_t block_size) { return x; }
)cu";

fs::path test_cache_dir() {
  static const fs::path dir = [] {
    fs::path p = fs::temp_directory_path() / ("kagent-nvcc-test-" + std::to_string(::getpid()));
    fs::remove_all(p);
    return p;
  }();
  return dir;
}

CompileOptions options() {
  CompileOptions o;
  o.cache_dir = test_cache_dir().string();
  o.arch = "sm_90a";
  return o;
}

std::string run(const std::vector<std::string>& argv) {
  SpawnOptions so;
  so.argv = argv;
  return run_command(so, std::chrono::seconds(60)).output;
}

}  // namespace

TEST_CASE("a good kernel compiles to a .so that registers forward; the second compile is a cache hit") {
  const CompileInfo info = compile_native(relu_spec(), kGoodKernel, options());
  INFO("errors: " << info.errors << "\nlog: " << info.log);
  REQUIRE(info.ok);
  CHECK_FALSE(info.cache_hit);
  CHECK(info.errors.empty());
  CHECK(info.reason.empty());
  CHECK(info.op_name.rfind("kagent_", 0) == 0);
  CHECK(info.op_name.size() == std::string("kagent_").size() + 16 + std::string("::forward").size());
  CHECK(fs::exists(info.artifact));
  CHECK(info.command.find("-gencode=arch=compute_90a,code=sm_90a") != std::string::npos);
  CHECK(info.command.find("--no-undefined") != std::string::npos);
  MESSAGE("first compile: " << info.seconds << " s");

  // The registration: the entry point, the op namespace and schema, the library initializer.
  const std::string syms = run({"nm", "-C", info.artifact});
  CHECK(syms.find("kagent_entry_forward(at::Tensor)") != std::string::npos);
  CHECK(syms.find("kagent_op_namespace") != std::string::npos);
  CHECK(syms.find("kagent_library_init") != std::string::npos);
  std::ifstream so(info.artifact, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(so)), std::istreambuf_iterator<char>());
  const std::string ns = info.op_name.substr(0, info.op_name.find("::"));
  CHECK(bytes.find(ns) != std::string::npos);
  CHECK(bytes.find("forward(Tensor x) -> Tensor") != std::string::npos);
  // Candidates' own symbols stay private, so two candidates in one worker cannot collide.
  CHECK(run({"nm", "-DC", "--defined-only", info.artifact}).find("forward") == std::string::npos);

  REQUIRE(info.resources.size() == 1);
  CHECK(info.resources[0].kernel == "relu_kernel(float const*, float*, long)");
  CHECK(info.resources[0].registers > 0);

  const auto t0 = std::chrono::steady_clock::now();
  const CompileInfo again = compile_native(relu_spec(), kGoodKernel, options());
  const double hit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(again.ok);
  CHECK(again.cache_hit);
  CHECK(hit_seconds < 1.0);
  CHECK(again.artifact == info.artifact);
  CHECK(again.op_name == info.op_name);
  CHECK(again.resources.size() == 1);
}

TEST_CASE("pool compiles at once: broken kernel, missing forward, wrong signature, a kernel needing ATen.h") {
  CompilePool pool(4);
  auto aten = pool.submit(relu_spec(), kNeedsATen, options());
  auto broken = pool.submit(relu_spec(), kBrokenKernel, options());
  auto missing = pool.submit(relu_spec(), kMissingForward, options());
  auto wrong = pool.submit(relu_spec(), kWrongSignature, options());

  const CompileInfo b = broken.get();
  INFO("broken errors:\n" << b.errors);
  CHECK_FALSE(b.ok);
  CHECK(b.reason.empty());
  CHECK(b.errors.find("kernel.cu:5:") != std::string::npos);
  CHECK(b.errors.find("zero_value") != std::string::npos);
  CHECK(b.errors.find("if (i < n) y[i] = fmaxf(x[i], zero_value);") != std::string::npos);  // the source line
  CHECK(b.errors.find("^") != std::string::npos);
  CHECK(b.errors.find("/tmp") == std::string::npos);
  CHECK(b.errors.find("kagent binding") == std::string::npos);  // forward itself is fine
  CHECK(b.log.find("zero_value") != std::string::npos);
  MESSAGE("broken kernel errors:\n" << b.errors);

  const CompileInfo m = missing.get();
  INFO("missing errors:\n" << m.errors << "\nlog:\n" << m.log);
  CHECK_FALSE(m.ok);
  CHECK(m.reason == reason::kMissingForward);
  CHECK(m.errors.find("kagent: missing forward") != std::string::npos);
  CHECK(m.errors.find("torch::Tensor forward(torch::Tensor x)") != std::string::npos);
  MESSAGE("missing forward errors:\n" << m.errors);

  const CompileInfo w = wrong.get();
  INFO("wrong errors:\n" << w.errors << "\nlog:\n" << w.log);
  CHECK_FALSE(w.ok);
  CHECK(w.reason == reason::kSignatureMismatch);
  CHECK(w.errors.find("kagent: forward must be callable as: torch::Tensor forward(torch::Tensor x)") !=
        std::string::npos);
  MESSAGE("wrong signature errors:\n" << w.errors);

  const CompileInfo n = aten.get();
  INFO("needs-ATen log:\n" << n.log);
  CHECK(n.ok);
  // Whether the light header suffices depends on torch's headers there (it does on the H200
  // machine's torch, not on this one's); either way the candidate must build, and a rebuild says so.
  if (n.log.find("kagent: rebuilt") != std::string::npos)
    CHECK(n.log.find("kagent: rebuilt with the aten torch/extension.h (the lite one lacked") != std::string::npos);

  // Failures are deterministic, so they are cached too.
  CHECK(compile_native(relu_spec(), kWrongSignature, options()).cache_hit);
  fs::remove_all(test_cache_dir());
}

namespace {
// 20 parameters (ten Linear(8, 8) layers): above kMaxPositionalParams, so forward takes a
// kagent::Params.
ProblemSpec linear_stack_spec() {
  ProblemSpec s;
  s.name = "linear_stack";
  s.inputs.push_back({"x", "x", ArgKind::Tensor, "float32", {4, 8}, false, ""});
  for (int i = 0; i < 10; ++i)
    for (const char* what : {"weight", "bias"}) {
      std::string name = "layers." + std::to_string(i) + "." + what;
      s.params.push_back({name, "layers_" + std::to_string(i) + "_" + what, ArgKind::Tensor, "float32",
                          std::string(what) == "weight" ? std::vector<int64_t>{8, 8} : std::vector<int64_t>{8}, false,
                          ""});
    }
  s.outputs.push_back({"float32", {4, 8}});
  return s;
}

// Host code only, so the test can call it on the CPU through the dispatcher: x plus the sum of
// every entry plus fc-like lookups; an input of one row asks for a name spelled with underscores.
const char* kParamsKernel = R"cu(#include <torch/extension.h>
torch::Tensor forward(torch::Tensor x, const kagent::Params& params) {
  TORCH_CHECK(params.size() == 20 && params.name(1) == "layers.0.bias", "unexpected names");
  if (x.size(0) == 1) return params["layers_9_bias"];
  auto out = x.clone();
  for (const auto& t : params) out.add_(t.sum());
  return out + params["layers.9.bias"] * params.at(params.index_of("layers.9.weight")).size(0);
}
)cu";

// The same function in positional form: the wrong convention for this problem.
const char* kParamsPositional = R"cu(#include <torch/extension.h>
torch::Tensor forward(torch::Tensor x, torch::Tensor layers_0_weight) { return x + layers_0_weight; }
)cu";

// Loads the .so into Python's torch and calls the op with CPU tensors in state_dict order.
const char* kCallScript = R"py(
import sys, torch
torch.ops.load_library(sys.argv[1])
ns, _ = sys.argv[2].split("::")
op = getattr(torch.ops, ns).forward
print("schema:", op.default._schema)
torch.manual_seed(0)
model = torch.nn.Module()
model.layers = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(10)])
params = list(model.state_dict().values())
x = torch.randn(4, 8)
want = x + sum(t.sum() for t in params) + model.state_dict()["layers.9.bias"] * 8
print("match:", torch.allclose(op(x, params)[0], want))
for bad in ([torch.randn(1, 8), params], [x, params[:3]]):
    try:
        op(*bad)
    except (RuntimeError, IndexError) as e:
        print("error:", str(e).splitlines()[0])
)py";
}  // namespace

TEST_CASE("a kagent::Params candidate compiles and, called through the dispatcher, sees names in state_dict order") {
  CompilePool pool(2);
  auto wrong = pool.submit(linear_stack_spec(), kParamsPositional, options());
  const CompileInfo info = compile_native(linear_stack_spec(), kParamsKernel, options());
  INFO("errors: " << info.errors << "\nlog: " << info.log);
  REQUIRE(info.ok);
  CHECK(info.command.find("--pre-include kagent/params.h") != std::string::npos);
  CHECK(info.peak_rss_mb > 0);
  MESSAGE("params compile: " << info.seconds << " s, largest compiler process " << info.peak_rss_mb << " MB");

  SpawnOptions so;
  so.argv = {build::kPythonExecutable, "-c", kCallScript, info.artifact, info.op_name};
  RunResult r = run_command(so, std::chrono::seconds(300));
  INFO("python: " << r.output);
  CHECK(r.exit.code == 0);
  CHECK(r.output.find("forward(Tensor x, Tensor[] params) -> Tensor[]") != std::string::npos);
  CHECK(r.output.find("match: True") != std::string::npos);
  CHECK(r.output.find("kagent::Params has no entry \"layers_9_bias\" (did you mean \"layers.9.bias\"?") !=
        std::string::npos);
  CHECK(r.output.find("kagent::Params: 3 tensors for 20 names") != std::string::npos);

  const CompileInfo w = wrong.get();
  INFO("wrong convention errors:\n" << w.errors);
  CHECK_FALSE(w.ok);
  CHECK(w.reason == reason::kSignatureMismatch);
  CHECK(w.errors.find("torch::Tensor forward(torch::Tensor x, const kagent::Params& params)") != std::string::npos);
  fs::remove_all(test_cache_dir());
}
