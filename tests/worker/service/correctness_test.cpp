// The correctness trials in-process, on the CPU (embedded CPython and torch): a problem whose
// forward changes its model's plain tensor state (KernelBench level 3's VanillaRNN keeps
// self.hidden and replaces it on every call) is judged as KernelBench's lockstep harness judges
// it, once both sides start each compared call from the state at construction.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "embedded_python.h"
#include "temp_dir.h"
#include "worker/service/correctness.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using namespace kagent;
using namespace kagent::worker;
using kagent::testing::TempDir;

namespace {

PythonRuntime& py() { return kagent::testing::embedded_python(); }

// VanillaRNN as in KernelBench level 3 (#33), small; ModelNew is an honest copy of it. Lstm
// only moves its plain h0 to the input's device, as KernelBench's LSTM problems do.
constexpr const char* kRnnProblem = R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        self.hidden = self.hidden.to(x.device)
        self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
        return self.h2o(self.hidden)

class ModelNew(Model):
    pass

class Lstm(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.h0 = torch.randn((1, batch_size, hidden_size))
        self.c0 = torch.randn((1, batch_size, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, _ = self.lstm(x.unsqueeze(1), (self.h0, self.c0))
        return self.fc(out[:, -1, :])

batch_size = 4
def get_inputs():
    return [torch.randn(batch_size, 16)]

def get_init_inputs():
    return [16, 32, 8]
)py";

PyRef construct(ProblemSession& problem, const char* cls) {
  PyRef module = check(PyObject_GetAttrString(problem.problem().get(), "module"));
  PyRef klass = check(PyObject_GetAttrString(module.get(), cls));
  PyRef make = check(PyObject_GetAttrString(problem.problem().get(), "make_model"));
  return check(PyObject_CallFunction(make.get(), "sLO", "cpu", 42LL, klass.get()));
}

struct Judged {
  bool ok;
  EvalResult result;
};

// The trials of class `cls` against class `reference_cls`, each runner with its state watched
// as the evaluation watches it (or not at all: kagent before it did).
Judged judge(ProblemSession& problem, const char* reference_cls, const char* cls, bool watched) {
  PyRef reference_model = construct(problem, reference_cls);
  PyRef candidate_model = construct(problem, cls);
  std::optional<ModuleState> reference_state, candidate_state;
  if (watched) {
    reference_state.emplace(py(), reference_model);
    candidate_state.emplace(py(), candidate_model);
  }
  PythonRunner reference(reference_model, std::move(reference_state));
  PythonRunner candidate(candidate_model, std::move(candidate_state));
  EvalOptions opts;
  Judged j{false, {}};
  j.ok = check_correctness(problem, candidate, reference, 0, opts, j.result, "cpu");
  return j;
}

const GuardFinding* find(const EvalResult& r, const std::string& name) {
  for (const auto& g : r.guards)
    if (g.name == name) return &g;
  return nullptr;
}

}  // namespace

TEST_CASE("a stateful reference: both sides start every compared call from the state at construction") {
  TempDir dir;
  ProblemSession problem(py(), dir.write("rnn.py", kRnnProblem));
  // Unwatched, the candidate's two calls per trial run its hidden state ahead of the reference's.
  const Judged before = judge(problem, "Model", "ModelNew", false);
  CHECK_FALSE(before.ok);
  CHECK(before.result.message.find("after reference") != std::string::npos);

  const Judged j = judge(problem, "Model", "ModelNew", true);
  CHECK_MESSAGE(j.ok, j.result.message);
  REQUIRE(j.result.correctness);
  CHECK(j.result.correctness->trials_passed == j.result.correctness->trials);
  const GuardFinding* f = find(j.result, "stateful_module");
  REQUIRE(f);
  CHECK(f->action == kGuardFlag);
  CHECK(f->message ==
        "forward changes Model.hidden between calls: every compared call starts from the state at construction");
}

TEST_CASE("a reference that only moves its plain state to the input's device is not stateful") {
  TempDir dir;
  ProblemSession problem(py(), dir.write("rnn.py", kRnnProblem));
  const Judged j = judge(problem, "Lstm", "Lstm", true);
  CHECK_MESSAGE(j.ok, j.result.message);
  CHECK(find(j.result, "stateful_module") == nullptr);
}

TEST_CASE("ModuleState: a snapshot at construction, changes after a call, put back only once held") {
  TempDir dir;
  ProblemSession problem(py(), dir.write("rnn.py", kRnnProblem));
  PyRef model = construct(problem, "Model");
  ModuleState state(py(), model);
  PythonRunner runner(model);
  CHECK_FALSE(state.empty());
  CHECK(state.changed().empty());
  const Values x = problem.make_inputs("cpu", 1);
  const at::Tensor first = runner.run(x)[0];
  CHECK(state.changed() == std::vector<std::string>{"Model.hidden"});
  state.restore();  // not held: nothing happens
  CHECK_FALSE(state.changed().empty());
  state.hold();
  state.restore();
  CHECK(state.changed().empty());
  CHECK(runner.run(x)[0].equal(first));
  state.restore();
  CHECK(runner.run(x)[0].equal(first));  // the first call's in-place use left the snapshot as it was
}
