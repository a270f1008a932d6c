// The Python-side guards in an embedded interpreter (as in the worker), on the CPU: the static
// scan of kernelbench sources (the shipped hacks and correct candidate, and small cases), the
// tampering snapshot, thread detection, the fp64 reference and extra input sets.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "build_info.h"
#include "temp_dir.h"
#include "worker/guards/guard_precision.h"
#include "worker/guards/guard_python.h"
#include "worker/service/problem_session.h"

using namespace kagent;
using namespace kagent::worker;
namespace fs = std::filesystem;

namespace {

PythonRuntime& py() {
  static PythonRuntime runtime(build::kPythonExecutable);
  return runtime;
}

void run_python(const std::string& code) { REQUIRE_MESSAGE(PyRun_SimpleString(code.c_str()) == 0, code); }

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
  CHECK((*truth)[0].scalar_type() == at::kDouble);
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

TEST_CASE("extra input sets come from get_extra_inputs(), none without it") {
  const fs::path problems = fs::path(KAGENT_SOURCE_DIR) / "tests/gpu/problems";
  ProblemSession extra(py(), (problems / "gelu_extra_shapes.py").string());
  PyRef sets = py().call(PyFn::ExtraInputs, {extra.problem(), check(PyUnicode_FromString("cpu")), check(PyLong_FromLong(3))});
  REQUIRE(PyList_Size(sets.get()) == 2);
  const auto first = from_python(PyList_GetItem(PyList_GetItem(sets.get(), 0), 0)).toTensor();
  CHECK(first.sizes() == at::IntArrayRef({1024, 1536}));
  ProblemSession plain(py(), (problems / "small_gelu.py").string());
  PyRef none = py().call(PyFn::ExtraInputs, {plain.problem(), check(PyUnicode_FromString("cpu")), check(PyLong_FromLong(3))});
  CHECK(PyList_Size(none.get()) == 0);
}
