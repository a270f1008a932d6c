// The real worker (embedded CPython + real torch, on the CPU) loads problems and derives
// their specs; every KernelBench level 1 and 2 problem must load.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/files.h"
#include "problem/forward_signature.h"
#include "problem/param_listing.h"
#include "temp_dir.h"
#include "worker/client/worker_client.h"
#include "kernelbench_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {
using testing::kernelbench_dir;

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

ProblemSpec load_source(const std::string& name, const std::string& source) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << source;
  ProblemSpec s = load(p.string());
  fs::remove(p);
  return s;
}

WorkerError load_error(const std::string& source) {
  const kagent::testing::TempDir dir("kagent-bad-problem");
  auto r = shared_worker().load_problem(dir.write("bad_problem.py", source));
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

namespace {
// The test process's working directory for a scope.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const fs::path& dir) : before_(fs::current_path()) { fs::current_path(dir); }
  ~WorkingDirectory() {
    std::error_code ec;
    fs::current_path(before_, ec);
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  fs::path before_;
};
}  // namespace

TEST_CASE("the worker runs in its scratch folder; the caller's relative paths still name the caller's files") {
  // As 2 of CUDA-L1's answers build their extension (`os.makedirs("cuda_extensions")`, then
  // `build_directory="cuda_extensions"`): a folder relative to the working directory. In the
  // caller's folder the sandbox refuses it; in the scratch folder, the worker's own, it is made.
  const kagent::testing::TempDir dir("kagent-relative-build");
  dir.write("relative_build.py", R"py(import os
import torch

os.makedirs("cuda_extensions", exist_ok=True)
with open(os.path.join("cuda_extensions", "built"), "w") as f:
    f.write(os.getcwd())

class Model(torch.nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    return [torch.randn(4)]

def get_init_inputs():
    return []
)py");
  const WorkingDirectory in_caller_folder(dir.path());
  // A fresh worker: one started before would be in another folder, which proves nothing here.
  WorkerOptions o;
  o.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  WorkerClient worker(o);
  auto r = worker.load_problem("relative_build.py");  // relative to this process's folder, not the worker's
  if (auto* e = std::get_if<WorkerError>(&r)) FAIL("relative_build.py: " << e->kind << ": " << e->message);
  CHECK(std::get<ProblemSpec>(r).name == "relative_build");
  CHECK_MESSAGE(!fs::exists(dir.path() / "cuda_extensions"), "the folder was made in the caller's working directory");
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

namespace {

std::string shapes(const std::vector<TensorArg>& args) {
  std::string s;
  for (const auto& a : args) {
    if (!s.empty()) s += ", ";
    s += "`" + a.name + "` " + (a.kind == ArgKind::Tensor ? a.dtype + " [" : to_string(a.kind));
    if (a.kind == ArgKind::Tensor) {
      for (size_t i = 0; i < a.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
      s += "]";
    }
  }
  return s;
}

std::string output_shapes(const ProblemSpec& p) {
  std::string s;
  for (const auto& o : p.outputs) {
    if (!s.empty()) s += ", ";
    s += o.dtype + " [";
    for (size_t i = 0; i < o.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(o.shape[i]);
    s += "]";
  }
  return p.output_is_tuple ? "(" + s + ")" : s;
}

// docs/level3_signatures.md: a table of every level 3 problem, then each one's signature and
// parameter list as the task prompt gives them.
std::string level3_markdown(const std::vector<ProblemSpec>& specs) {
  std::ostringstream md;
  md << "# KernelBench level 3: native signatures and parameters\n\n"
     << "Generated by `scripts/level3_signatures.sh` (the worker derives each spec on the CPU; the signature and\n"
     << "the grouped parameter list are what the task prompt shows). Models with more than "
     << kMaxPositionalParams << " parameters and\n"
     << "buffers take them as one `const kagent::Params&` addressed by state_dict name; the others one by one.\n"
     << "Mode: the mode the problem file leaves the model in, which the evaluation keeps.\n\n"
     << "| problem | inputs | outputs | parameters | buffers | passing | mode |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const auto& p : specs) {
    size_t buffers = 0;
    for (const auto& a : p.params) buffers += a.is_buffer;
    md << "| " << p.name << " | " << shapes(p.inputs) << " | " << output_shapes(p) << " | "
       << p.params.size() - buffers << " | " << buffers << " | "
       << (param_passing(p) == ParamPassing::Collection ? "kagent::Params" : "positional") << " | "
       << mode_summary(p) << " |\n";
  }
  for (const auto& p : specs) {
    md << "\n## " << p.name << "\n\n```cpp\n" << forward_signature(p) << "\n```\n";
    if (p.params.empty()) continue;
    if (param_passing(p) == ParamPassing::Collection) {
      md << "\n" << p.params.size() << " tensors, all " << common_dtype(p.params) << " unless marked:\n\n";
      for (const auto& line : param_listing(p.params)) md << "- " << line << "\n";
    }
  }
  return md.str();
}

}  // namespace

TEST_CASE("every KernelBench level 3 problem loads and yields a spec; docs/level3_signatures.md is current") {
  if (!have_kernelbench()) return;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(kernelbench_dir()) / "level3"))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  // By problem number, as KernelBench lists them.
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return std::stoi(a.filename().string()) < std::stoi(b.filename().string());
  });
  REQUIRE(files.size() == 50);
  std::vector<ProblemSpec> specs;
  for (const auto& f : files) {
    ProblemSpec s = load(f.string());
    CHECK_MESSAGE(!s.inputs.empty(), s.name);
    CHECK_MESSAGE(!s.outputs.empty(), s.name);
    CHECK(s.level.value_or(0) == 3);
    CHECK_MESSAGE(s.training.has_value(), s.name);
    CHECK_NOTHROW(forward_signature(s));  // every input is one a native candidate can take
    specs.push_back(std::move(s));
  }
  // The largest: ResNet101 in training mode (nn.Module's default), BatchNorm on batch statistics.
  const auto& resnet = specs[9];
  REQUIRE(resnet.name == "10_ResNet101");
  CHECK(resnet.params.size() == 626);
  CHECK(param_passing(resnet) == ParamPassing::Collection);
  CHECK(mode_summary(resnet) == "training mode: 104 BatchNorm2d (batch statistics)");

  const std::string doc = level3_markdown(specs);
  const fs::path committed = fs::path(KAGENT_SOURCE_DIR) / "docs" / "level3_signatures.md";
  if (const char* update = std::getenv("KAGENT_UPDATE_LEVEL3_DOC"); update && std::string(update) == "1") {
    std::ofstream(committed) << doc;
    MESSAGE("wrote " << committed);
  }
  const bool current = fs::exists(committed) && read_file(committed) == doc;
  CHECK_MESSAGE(current, committed << " is not what the specs give now: run scripts/level3_signatures.sh");
}

TEST_CASE("integer inputs (token ids), several outputs, scalars, eval mode") {
  ProblemSpec s = load_source("kagent_tokens_problem.py", R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.BatchNorm1d(dim)
        self.head = nn.Linear(dim, vocab)
        self.eval()

    def forward(self, idx, temperature, steps):
        h = self.embed(idx)
        h = self.norm(h.transpose(1, 2)).transpose(1, 2)
        return self.head(h) / temperature, h.sum(1) * steps

def get_inputs():
    return [torch.randint(0, 100, (4, 16)), 0.7, 3]

def get_init_inputs():
    return [100, 32]
)py");
  REQUIRE(s.inputs.size() == 3);
  CHECK(s.inputs[0].kind == ArgKind::Tensor);
  CHECK(s.inputs[0].dtype == "int64");
  CHECK(s.inputs[0].shape == std::vector<int64_t>{4, 16});
  CHECK(s.inputs[1].kind == ArgKind::Float);
  CHECK(s.inputs[2].kind == ArgKind::Int);
  REQUIRE(s.outputs.size() == 2);
  CHECK(s.output_is_tuple);
  CHECK(s.outputs[0].shape == std::vector<int64_t>{4, 16, 100});
  CHECK(s.outputs[1].shape == std::vector<int64_t>{4, 32});
  CHECK(s.training == false);
  CHECK(mode_summary(s) == "eval mode: 1 BatchNorm1d (running statistics)");
  CHECK(forward_signature(s) ==
        "std::vector<torch::Tensor> forward(torch::Tensor idx, double temperature, int64_t steps, torch::Tensor "
        "embed_weight, torch::Tensor norm_weight, torch::Tensor norm_bias, torch::Tensor norm_running_mean, "
        "torch::Tensor norm_running_var, torch::Tensor norm_num_batches_tracked, torch::Tensor head_weight, "
        "torch::Tensor head_bias)");
}
