// A reference that fails only beside a candidate (worker/service/reference_check.h), in-process
// on the CPU: the candidate's failure, naming what it changed, when the reference runs alone;
// kagent's (nullopt) when it fails alone too. As an answer can: F.linear replaced process-wide
// by one that takes its weight in the answer's own layout, which the reference's nn.Linear
// then calls with the usual one.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <ATen/ATen.h>

#include "embedded_python.h"
#include "result/eval_result.h"
#include "temp_dir.h"
#include "worker/service/calls.h"
#include "worker/service/problem_session.h"
#include "worker/service/reference_check.h"
#include "worker/service/runners.h"
#include "worker/service/worker_state.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using namespace kagent;
using namespace kagent::worker;
using kagent::testing::run_python;
using kagent::testing::TempDir;

namespace {

PythonRuntime& py() { return kagent::testing::embedded_python(); }

// A Linear whose forward refuses a batch of 3: a reference that fails on its own.
constexpr const char* kLinearProblem = R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)

    def forward(self, x):
        if x.shape[0] == 3:
            raise RuntimeError("this reference takes no batch of 3")
        return self.fc(x)

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return []
)py";

// The reference's call, expected to fail: the EvaluatorError it raised.
std::optional<EvaluatorError> reference_failure(Runner& reference, const Values& inputs) {
  try {
    (void)call_reference(reference, inputs);
  } catch (const EvaluatorError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("a reference that fails only beside the candidate is the candidate's failure, naming what it changed") {
  const TempDir dir("kagent-reference-check");
  ProblemSession problem(py(), dir.write("linear.py", kLinearProblem));
  const DeviceInfo no_device;  // WorkerState keeps a reference: not a temporary's
  WorkerState state(py(), no_device);  // as the request found the worker, before the candidate
  PythonRunner reference(problem.make_model("cpu", 42));
  const Values inputs = problem.make_inputs("cpu", 42);
  (void)call_reference(reference, inputs);  // runs before the candidate loads

  run_python("import torch.nn.functional as F\n_kg_linear = F.linear\n"
             "F.linear = lambda x, w, b=None: _kg_linear(x, w.t().contiguous(), None)\n");
  const auto failure = reference_failure(reference, inputs);
  REQUIRE(failure);
  CHECK(failure->reason == reason::kReferenceFailed);
  const auto message = reference_broken_by_candidate(problem, &state, *failure, 42, "cpu");
  REQUIRE(message);
  const std::string first = message->substr(0, message->find('\n'));
  CHECK_MESSAGE(first.find("the candidate changed patched_function") != std::string::npos, first);
  CHECK_MESSAGE(first.find("torch.nn.functional.linear") != std::string::npos, first);
  CHECK(message->find("the reference failed: ") != std::string::npos);  // its own error kept below
  run_python("assert F.linear is _kg_linear, 'F.linear was not put back'\n");
  (void)call_reference(reference, inputs);  // the evaluation's own reference works again

  // After the request the worker's check names it once more in isolation.left_behind, once.
  int named = 0;
  for (const auto& l : state.check_and_restore(false)) named += l.item == "patched_function";
  CHECK(named == 1);
  CHECK_FALSE(state.must_replace());
}

TEST_CASE("a reference that fails alone too stays kagent's; other evaluator failures are not looked at") {
  const TempDir dir("kagent-reference-check");
  ProblemSession problem(py(), dir.write("linear.py", kLinearProblem));
  const DeviceInfo no_device;
  WorkerState state(py(), no_device);
  PythonRunner reference(problem.make_model("cpu", 42));
  const Values batch_of_3{c10::IValue(at::randn({3, 8}))};
  const auto failure = reference_failure(reference, batch_of_3);
  REQUIRE(failure);
  CHECK_FALSE(reference_broken_by_candidate(problem, &state, *failure, 42, "cpu"));

  const EvaluatorError own_step("kagent's own step failed", reason::kEvaluatorError);
  CHECK_FALSE(reference_broken_by_candidate(problem, &state, own_step, 42, "cpu"));
}
