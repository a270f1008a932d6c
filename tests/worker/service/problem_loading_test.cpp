// The real worker (embedded CPython + real torch, on the CPU) loads problems and derives
// their specs; every KernelBench level 1 and 2 problem must load.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "problem/forward_signature.h"
#include "worker/client/worker_client.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {
// KernelBench's problems: the folder the build names (KAGENT_KERNELBENCH_DIR, see
// tests/CMakeLists.txt), or a carried copy named by the environment variable of that name.
std::string kernelbench_dir() {
  const char* env = std::getenv("KAGENT_KERNELBENCH_DIR");
  return env && *env ? env : KAGENT_KERNELBENCH_DIR;
}

bool have_kernelbench() {
  if (fs::is_directory(kernelbench_dir())) return true;
  // CI always has it: there its absence is a failure, not a skip.
  if (std::getenv("CI")) FAIL("KernelBench problems expected at " << kernelbench_dir());
  MESSAGE("SKIPPED: no KernelBench problems at " << kernelbench_dir());
  return false;
}

WorkerClient& shared_worker() {
  static WorkerClient w([] {
    WorkerOptions o;
    o.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
    return o;
  }());
  return w;
}

ProblemSpec load(const std::string& path) {
  auto r = shared_worker().load_problem(path);
  if (auto* e = std::get_if<WorkerError>(&r)) FAIL(path << ": " << e->kind << ": " << e->message);
  return std::get<ProblemSpec>(r);
}

WorkerError load_error(const std::string& source) {
  fs::path p = fs::temp_directory_path() / "kagent_bad_problem.py";
  std::ofstream(p) << source;
  auto r = shared_worker().load_problem(p.string());
  REQUIRE(std::holds_alternative<WorkerError>(r));
  return std::get<WorkerError>(r);
}
}  // namespace

TEST_CASE("every KernelBench level 1 and level 2 problem loads and yields a spec") {
  if (!have_kernelbench()) return;
  int loaded = 0;
  for (const char* level : {"level1", "level2"}) {
    fs::path dir = fs::path(kernelbench_dir()) / level;
    REQUIRE_MESSAGE(fs::is_directory(dir), "KernelBench problems expected at " << dir);
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".py") continue;
      ProblemSpec s = load(entry.path().string());
      CHECK_MESSAGE(!s.inputs.empty(), s.name);
      CHECK_MESSAGE(!s.outputs.empty(), s.name);
      CHECK(s.sha256.size() == 64);
      CHECK(s.level.value_or(0) == (std::string(level) == "level1" ? 1 : 2));
      ++loaded;
    }
  }
  CHECK(loaded == 200);
}

TEST_CASE("spec of a fused problem: inputs, state_dict order, outputs, signature") {
  if (!have_kernelbench()) return;
  ProblemSpec s = load(kernelbench_dir() + "/level2/76_Gemm_Add_ReLU.py");
  REQUIRE(s.inputs.size() == 1);
  CHECK(s.inputs[0].name == "x");
  CHECK(s.inputs[0].dtype == "float32");
  REQUIRE(s.params.size() == 2);
  // The module's own bias comes before its child's weight: state_dict order.
  CHECK(s.params[0].name == "bias");
  CHECK(s.params[1].name == "gemm.weight");
  CHECK(s.params[1].cpp_name == "gemm_weight");
  CHECK(s.outputs.size() == 1);
  CHECK_FALSE(s.output_is_tuple);
  CHECK(forward_signature(s) == "torch::Tensor forward(torch::Tensor x, torch::Tensor bias, torch::Tensor gemm_weight)");
}

TEST_CASE("scalars among the inputs, buffers among the parameters") {
  if (!have_kernelbench()) return;
  ProblemSpec relu = load(kernelbench_dir() + "/level1/19_ReLU.py");
  CHECK(relu.inputs[0].shape.size() == 2);
  CHECK(relu.params.empty());
  // BatchNorm: running stats are buffers and come in state_dict order after weight and bias.
  ProblemSpec bn = load(kernelbench_dir() + "/level1/33_BatchNorm.py");
  bool has_buffer = false;
  for (const auto& p : bn.params) has_buffer |= p.is_buffer;
  CHECK(has_buffer);
  CHECK(bn.params[0].name == "bn.weight");
}

TEST_CASE("bad problems give one classified error each") {
  CHECK(load_error("import torch\nclass Model(torch.nn.Module):\n  def forward(self, x)\n    return x\n").kind ==
        "problem_load_error");
  auto syntax = load_error("def broken(:\n");
  CHECK(syntax.message.find("SyntaxError") == 0);
  CHECK(syntax.message.find("line 1") != std::string::npos);
  auto no_inputs = load_error("import torch\nclass Model(torch.nn.Module):\n  def forward(self, x): return x\n"
                              "def get_init_inputs(): return []\n");
  CHECK(no_inputs.kind == "problem_incomplete");
  CHECK(no_inputs.message.find("get_inputs") != std::string::npos);
  auto raises = load_error("import torch\nraise RuntimeError('boom')\n");
  CHECK(raises.kind == "problem_load_error");
  CHECK(raises.message.find("boom") != std::string::npos);
  auto missing = shared_worker().load_problem("/nonexistent/problem.py");
  REQUIRE(std::holds_alternative<WorkerError>(missing));
  CHECK(std::get<WorkerError>(missing).kind == "file_not_found");
}

TEST_CASE("the worker reports its device; without a GPU an evaluation says so") {
  auto hello = shared_worker().hello();
  REQUIRE(std::holds_alternative<DeviceInfo>(hello));
  const auto device = std::get<DeviceInfo>(hello);
  if (!device.available) {
    EvalResult r = shared_worker().evaluate(KAGENT_SOURCE_DIR "/examples/elementwise_gelu.py",
                                     CandidateRef{"kernelbench", "", "", "x.py"});
    CHECK(r.status == Status::InternalError);
    CHECK(r.reason == "no_gpu");
  }
}
