// The Python-side guards in an embedded interpreter (as in the worker), on the CPU: the static
// scan of kernelbench sources (the shipped hacks and correct candidate, and small cases), the
// tampering snapshot, thread detection, the fp64 reference and extra input sets.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "build_info.h"
#include "embedded_python.h"
#include "kernelbench_dir.h"
#include "temp_dir.h"
#include "worker/guards/guard_precision.h"
#include "worker/guards/guard_python.h"
#include "worker/service/problem_session.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using namespace kagent;
using namespace kagent::worker;
using kagent::testing::TempDir;
namespace fs = std::filesystem;

namespace {

PythonRuntime& py() { return kagent::testing::embedded_python(); }
using kagent::testing::run_python;

std::vector<GuardFinding> scan_file(const std::string& relative) {
  return scan_kernelbench_source(py(), (fs::path(KAGENT_SOURCE_DIR) / relative).string());
}

std::vector<GuardFinding> scan_text(const std::string& source) {
  const kagent::testing::TempDir dir("kagent-guard-scan");
  return scan_kernelbench_source(py(), dir.write("candidate.py", source));
}

const GuardFinding* find(const std::vector<GuardFinding>& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

// A ModelNew around a load_inline extension `ext`, with `forward_body` (indented 8 spaces).
std::string candidate(const std::string& forward_body, const std::string& extra = "") {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n" + extra +
         "ext = load_inline(name='x', cpp_sources='', functions=['op', 'matmul'])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        self.ext = ext\n"
         "        self.linear = nn.Linear(8, 8)\n"
         "        self.flat = nn.Flatten()\n\n"
         "    def helper(self, x):\n"
         "        return torch.softmax(x, dim=1)\n\n"
         "    def forward(self, x):\n" + forward_body;
}

}  // namespace

TEST_CASE("source scan of the shipped kernelbench hacks and the correct candidate") {
  const auto fallback = scan_file("tests/gpu/hacks/kb_fallback.py");
  REQUIRE(find(fallback, "try_except_fallback"));
  CHECK(find(fallback, "try_except_fallback")->action == "reject");
  CHECK(find(fallback, "try_except_fallback")->message.find("torch.nn.functional.gelu") != std::string::npos);

  const auto threads = scan_file("tests/gpu/hacks/kb_thread_pool.py");
  REQUIRE(find(threads, "threads"));
  CHECK(find(threads, "threads")->message.find("concurrent.futures") != std::string::npos);

  const auto matmul = scan_file("tests/gpu/hacks/kb_torch_matmul.py");
  REQUIRE(matmul.size() == 1);  // a flag only: the run-time library_share guard decides
  CHECK(matmul[0].name == "torch_ops_in_forward");
  CHECK(matmul[0].action == "flag");
  CHECK(matmul[0].message.find("torch.matmul") != std::string::npos);

  CHECK(scan_file("tests/gpu/hacks/kb_timer_patch.py").empty());  // caught at run time, by identity
  CHECK(scan_file("tests/gpu/kernels/kb_gelu_correct.py").empty());
}

TEST_CASE("source scan: what counts as PyTorch computing in forward") {
  CHECK(scan_text(candidate("        return self.ext.op(x)\n")).empty());
  CHECK(scan_text(candidate("        return self.ext.matmul(x)\n")).empty());  // the extension's own "matmul"
  CHECK(scan_text(candidate("        y = torch.empty_like(x)\n        return self.ext.op(x.view(-1)).view_as(y)\n")).empty());
  CHECK(scan_text(candidate("        return self.ext.op(self.flat(x))\n")).empty());  // containers compute nothing
  for (const char* body : {"        return F.relu(self.ext.op(x))\n", "        return self.linear(x)\n",
                           "        return self.ext.op(x) @ x\n", "        return self.helper(x)\n",
                           "        return self.ext.op(x).sum(dim=0)\n", "        return nn.ReLU()(x)\n"}) {
    const auto f = scan_text(candidate(body));
    CAPTURE(body);
    REQUIRE(f.size() == 1);
    CHECK(f[0].name == "torch_ops_in_forward");
  }
}

TEST_CASE("source scan: fallbacks and threads, and what is neither") {
  const auto reraise = scan_text(candidate("        try:\n            return self.ext.op(x)\n"
                                           "        except RuntimeError as e:\n            raise ValueError(str(e))\n"));
  CHECK(reraise.empty());
  const auto via_method = scan_text(candidate("        try:\n            return self.ext.op(x)\n"
                                              "        except Exception:\n            return self.helper(x)\n"));
  REQUIRE(find(via_method, "try_except_fallback"));
  CHECK(find(via_method, "try_except_fallback")->message.find("torch.softmax") != std::string::npos);
  CHECK(find(scan_text(candidate("        return self.ext.op(x)\n", "import torch.multiprocessing as mp\n")), "threads"));
  CHECK(find(scan_text(candidate("        return self.ext.op(x)\n", "th = __import__('threading')\n")), "threads"));
  CHECK(scan_text("this is not python(").empty());
}

TEST_CASE("tampering: replaced timing and torch functions and changed precision settings are seen") {
  PythonWatch watch(py());
  CHECK(watch.tampering().empty());

  run_python("import torch, time\n_kg_old = torch.cuda.Event.elapsed_time\n"
             "torch.cuda.Event.elapsed_time = lambda self, end: 0.0\n");
  auto f = watch.tampering();
  REQUIRE(f.size() == 1);
  CHECK(f[0].name == "timing_tampered");
  CHECK(f[0].message.find("torch.cuda.Event.elapsed_time") != std::string::npos);
  run_python("torch.cuda.Event.elapsed_time = _kg_old\n_kg_old = time.perf_counter\ntime.perf_counter = lambda: 0.0\n");
  REQUIRE(watch.tampering().size() == 1);
  CHECK(watch.tampering()[0].message.find("time.perf_counter") != std::string::npos);
  run_python("time.perf_counter = _kg_old\n");
  CHECK(watch.tampering().empty());

  run_python("import torch.nn.functional as F\n_kg_old = F.gelu\nF.gelu = lambda x, approximate='none': x\n");
  f = watch.tampering();
  REQUIRE(f.size() == 1);
  CHECK(f[0].name == "torch_patched");
  CHECK(f[0].message.find("torch.nn.functional.gelu") != std::string::npos);
  run_python("F.gelu = _kg_old\n_kg_old = torch.Tensor.__matmul__\ntorch.Tensor.__matmul__ = lambda a, b: a\n");
  REQUIRE(watch.tampering().size() == 1);
  CHECK(watch.tampering()[0].message.find("torch.Tensor.__matmul__") != std::string::npos);
  run_python("torch.Tensor.__matmul__ = _kg_old\ntorch.backends.cuda.matmul.allow_tf32 = True\n");
  f = watch.tampering();
  REQUIRE(f.size() == 1);
  CHECK(f[0].name == "torch_patched");
  CHECK(f[0].message.find("allow_tf32: False -> True") != std::string::npos);
  run_python("torch.backends.cuda.matmul.allow_tf32 = False\n");
  CHECK(watch.tampering().empty());
}

TEST_CASE("threads: a Python thread left running after the mark is reported by name") {
  PythonWatch watch(py());
  CHECK_FALSE(watch.new_threads());
  run_python("import threading\n_kg_stop = threading.Event()\n"
             "_kg_thread = threading.Thread(target=_kg_stop.wait, name='kagent-test-prefetch', daemon=True)\n"
             "_kg_thread.start()\n");
  const auto f = watch.new_threads();
  REQUIRE(f);
  CHECK(f->name == "threads");
  CHECK(f->message.find("kagent-test-prefetch") != std::string::npos);
  watch.mark_threads();  // a thread already there at the mark is not the candidate's doing
  CHECK_FALSE(watch.new_threads());
  run_python("_kg_stop.set()\n_kg_thread.join()\n");
}

TEST_CASE("the fp64 reference: double outputs, or the reason there are none") {
  ProblemSession gelu(py(), (fs::path(KAGENT_SOURCE_DIR) / "tests/gpu/problems/small_gelu.py").string());
  PyRef model = gelu.make_model("cpu", 42);
  const Values inputs = gelu.make_inputs("cpu", 1);
  std::string why;
  const auto truth = reference_fp64(py(), model.get(), inputs, why);
  REQUIRE(truth);
  REQUIRE(truth->size() == 1);
  CHECK(((*truth)[0].scalar_type() == at::kDouble));
  CHECK((*truth)[0].sizes() == inputs[0].toTensor().sizes());

  const kagent::testing::TempDir dir("kagent-guard-casting");
  const std::string casting = dir.write("casting_problem.py", "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                            "    def forward(self, x):\n        return x.float() * 2\n\n"
                            "def get_inputs():\n    return [torch.randn(4, 4)]\n\n"
                            "def get_init_inputs():\n    return []\n");
  ProblemSession casts(py(), casting);
  PyRef casting_model = casts.make_model("cpu", 42);
  CHECK_FALSE(reference_fp64(py(), casting_model.get(), casts.make_inputs("cpu", 1), why));
  CHECK(why.find("float32") != std::string::npos);
}

// The extra input sets and their note, as check_extra_shapes receives them.
std::pair<std::vector<Values>, std::string> extra_sets(ProblemSession& p) {
  PyRef model = p.make_model("cpu", 42);
  PyRef made = py().call(PyFn::ExtraInputs, {p.problem(), model, check(PyUnicode_FromString("cpu")), check(PyLong_FromLong(3))});
  PyRef lists = check(PyObject_GetItem(made.get(), check(PyUnicode_FromString("sets")).get()));
  std::vector<Values> sets;
  for (Py_ssize_t i = 0; i < PyList_Size(lists.get()); ++i) {
    Values v;
    PyObject* list = PyList_GetItem(lists.get(), i);
    for (Py_ssize_t k = 0; k < PyList_Size(list); ++k) v.push_back(from_python(PyList_GetItem(list, k)));
    sets.push_back(std::move(v));
  }
  return {sets, to_std_string(check(PyObject_GetItem(made.get(), check(PyUnicode_FromString("note")).get())).get())};
}

TEST_CASE("extra input sets: a problem's own get_extra_inputs(), else derived sizes, else why not") {
  const fs::path problems = fs::path(KAGENT_SOURCE_DIR) / "tests/gpu/problems";
  ProblemSession own(py(), (problems / "gelu_extra_shapes.py").string());
  auto [sets, note] = extra_sets(own);
  REQUIRE(sets.size() == 2);
  CHECK(sets[0][0].toTensor().sizes() == at::IntArrayRef({1024, 1536}));
  CHECK(note == "get_extra_inputs()");

  // Derived: the module-level integers only get_inputs() reads, smaller and odd.
  ProblemSession plain(py(), (problems / "small_gelu.py").string());
  auto [derived, how] = extra_sets(plain);
  REQUIRE_FALSE(derived.empty());
  CHECK(how.rfind("derived:", 0) == 0);
  CHECK(derived[0][0].toTensor().sizes() != plain.make_inputs("cpu", 1)[0].toTensor().sizes());

  // Nothing to vary: sizes written into get_inputs() itself.
  TempDir dir;
  ProblemSession fixed(py(), dir.write("fixed.py", "import torch\nclass Model(torch.nn.Module):\n"
                                                   "    def forward(self, x):\n        return x * 2\n"
                                                   "def get_inputs():\n    return [torch.randn(8, 8)]\n"
                                                   "def get_init_inputs():\n    return []\n"));
  auto [none, why] = extra_sets(fixed);
  CHECK(none.empty());
  CHECK(why.find("cannot be varied") != std::string::npos);
}

TEST_CASE("derived sizes on KernelBench problems leave what the model is built from alone") {
  const fs::path kb = kagent::testing::kernelbench_dir();
  if (!fs::exists(kb)) {
    MESSAGE("SKIPPED: KernelBench problems not found at " << kb.string());
    return;
  }
  ProblemSession gemm(py(), (kb / "level2/76_Gemm_Add_ReLU.py").string());
  auto [sets, note] = extra_sets(gemm);
  REQUIRE(sets.size() == 1);
  CHECK(note == "derived: batch_size 1024 -> 511");  // in_features is the Linear's: kept
  CHECK(sets[0][0].toTensor().sizes() == at::IntArrayRef({511, 8192}));
}

namespace {

// A GEMM problem with candidates that compute it in different ways, as Python modules in one
// file (on the CPU, eager is plain fp32: the honest orders sit right next to it).
constexpr const char* kGemmProblem = R"py(import torch
import torch.nn as nn

def tf32(t):
    i = t.contiguous().view(torch.int32)
    i = (i + 0xFFF + ((i >> 13) & 1)) & ~0x1FFF
    return i.view(torch.float32)

class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)

class SplitK(nn.Module):      # honest fp32, another summation order
    def forward(self, a, b):
        return sum(a[:, k:k + 256] @ b[k:k + 256] for k in range(0, a.shape[1], 256))

class HalfInputs(nn.Module):  # fp16 operands, fp32 sums
    def forward(self, a, b):
        return a.half().float() @ b.half().float()

class Tf32Inputs(nn.Module):
    def forward(self, a, b):
        return tf32(a) @ tf32(b)

M = 64
K = 4096
def get_inputs():
    return [torch.rand(M, K), torch.rand(K, M)]  # all positive: rounding hides unless signs are mixed

def get_init_inputs():
    return []
)py";

constexpr const char* kConvProblem = R"py(import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3)
    def forward(self, x):
        return self.conv(x)

class Bf16Conv(Model):        # input and weights rounded to bf16, fp32 sums
    def forward(self, x):
        r = lambda t: t.bfloat16().float()
        return F.conv2d(r(x), r(self.conv.weight), r(self.conv.bias))

class Fp32Conv(Model):        # honest: im2col + matmul in fp32
    def forward(self, x):
        cols = F.unfold(x, 3)
        w = self.conv.weight.view(32, -1)
        out = (w @ cols) + self.conv.bias.view(1, 32, 1)
        return out.view(x.shape[0], 32, x.shape[2] - 2, x.shape[3] - 2)

batch = 4
def get_inputs():
    return [torch.rand(batch, 16, 24, 24)]

def get_init_inputs():
    return []
)py";

constexpr const char* kSumProblem = R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1)

class Bf16Sum(nn.Module):
    def forward(self, x):
        return torch.sum(x.bfloat16().float(), dim=1)

class PairwiseSum(nn.Module):  # honest: partial sums of 64, then their sum
    def forward(self, x):
        return x.view(x.shape[0], -1, 64).sum(2).sum(1)

rows = 128
cols = 8192
def get_inputs():
    return [torch.rand(rows, cols)]

def get_init_inputs():
    return []
)py";

// The precision guard's verdict on candidate class `cls` of `problem`, on the CPU.
std::optional<GuardFinding> precision_of(ProblemSession& problem, const char* cls, std::string& note) {
  PyRef reference_model = problem.make_model("cpu", 42);
  PyRef module = check(PyObject_GetAttrString(problem.problem().get(), "module"));
  PyRef klass = check(PyObject_GetAttrString(module.get(), cls));
  PyRef make = check(PyObject_GetAttrString(problem.problem().get(), "make_model"));
  PyRef candidate_model = check(PyObject_CallFunction(make.get(), "sLO", "cpu", 42LL, klass.get()));
  PythonRunner candidate(candidate_model), reference(reference_model);
  return check_precision(py(), problem, reference_model.get(), candidate, reference, 5, GuardOptions{}, ToleranceConfig{}, note, "cpu");
}

}  // namespace

TEST_CASE("precision_lowered catches reduced-precision GEMM, conv and sum kernels, passes honest fp32 ones") {
  TempDir dir;
  struct Case {
    const char* problem;
    const char* cls;
    bool caught;
  };
  ProblemSession gemm(py(), dir.write("gemm.py", kGemmProblem));
  ProblemSession conv(py(), dir.write("conv.py", kConvProblem));
  ProblemSession sum(py(), dir.write("sum.py", kSumProblem));
  std::map<std::string, ProblemSession*> problems = {{"gemm", &gemm}, {"conv", &conv}, {"sum", &sum}};
  for (const Case c : {Case{"gemm", "Model", false}, Case{"gemm", "SplitK", false}, Case{"gemm", "HalfInputs", true},
                       Case{"gemm", "Tf32Inputs", true}, Case{"conv", "Fp32Conv", false}, Case{"conv", "Bf16Conv", true},
                       Case{"sum", "PairwiseSum", false}, Case{"sum", "Bf16Sum", true}}) {
    const std::string name = std::string(c.problem) + "/" + c.cls;
    CAPTURE(name);
    std::string note;
    const auto f = precision_of(*problems[c.problem], c.cls, note);
    MESSAGE(name << ": " << (f ? f->message : "passed (" + note + ")"));
    CHECK(f.has_value() == c.caught);
    if (f) CHECK(f->name == "precision_lowered");
    CHECK(note.find("signs drawn at random") != std::string::npos);
  }
}

TEST_CASE("precision_lowered cuts large inputs before the fp64 runs") {
  TempDir dir;
  ProblemSession sum(py(), dir.write("sum.py", kSumProblem));
  PyRef model = sum.make_model("cpu", 42);
  PyRef made = py().call(PyFn::PrecisionInputs, {sum.problem(), model, check(PyUnicode_FromString("cpu")),
                                                  check(PyLong_FromLong(1)), check(PyLong_FromLong(1 << 20))});
  const auto x = from_python(PyList_GetItem(PyTuple_GetItem(made.get(), 0), 0)).toTensor();
  // 128 rows of 32 KiB each, cut to 1 MiB: 32 rows, one fewer once the outputs are counted too.
  CHECK(x.size(0) >= 30);
  CHECK(x.size(0) <= 32);
  CHECK(to_std_string(PyTuple_GetItem(made.get(), 1)).find("cut from 128 to 3") != std::string::npos);
}
