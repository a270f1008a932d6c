#include "worker/service/problem_session.h"

namespace kagent::worker {

namespace {
PyRef str(const std::string& s) { return check(PyUnicode_FromString(s.c_str())); }
PyRef integer(int64_t v) { return check(PyLong_FromLongLong(v)); }
}  // namespace

ProblemSession::ProblemSession(PythonRuntime& py, const std::string& path) : py_(py) {
  problem_ = py_.call(PyFn::OpenProblem, {str(path)});
  PyRef sha = check(PyObject_GetAttrString(problem_.get(), "sha256"));
  sha256_ = to_std_string(sha.get());
}

const nlohmann::json& ProblemSession::spec_json() {
  if (!spec_) {
    PyRef spec = py_.call(PyFn::DeriveSpec, {problem_});
    spec_json_ = to_json(spec.get());
    spec_ = spec_json_.get<ProblemSpec>();
  }
  return spec_json_;
}

const ProblemSpec& ProblemSession::spec() {
  spec_json();
  return *spec_;
}

PyRef ProblemSession::make_model(const std::string& device, int64_t seed) {
  PyRef fn = check(PyObject_GetAttrString(problem_.get(), "make_model"));
  return check(PyObject_CallFunction(fn.get(), "sL", device.c_str(), static_cast<long long>(seed)));
}

Values ProblemSession::inputs(const char* method, const std::string& device, int64_t seed) {
  PyRef fn = check(PyObject_GetAttrString(problem_.get(), method));
  PyRef list = check(PyObject_CallFunctionObjArgs(fn.get(), str(device).get(), integer(seed).get(), nullptr));
  Values out;
  Py_ssize_t n = PyList_Size(list.get());
  for (Py_ssize_t i = 0; i < n; ++i) out.push_back(from_python(PyList_GetItem(list.get(), i)));
  return out;
}

Values ProblemSession::make_inputs(const std::string& device, int64_t seed) { return inputs("make_inputs", device, seed); }

Values ProblemSession::kernelbench_inputs(const std::string& device, int64_t seed) {
  return inputs("kernelbench_inputs", device, seed);
}

std::vector<int64_t> ProblemSession::trial_seeds(int64_t seed, int count) {
  PyRef fn = check(PyObject_GetAttrString(problem_.get(), "trial_seeds"));
  PyRef list = check(PyObject_CallFunction(fn.get(), "Li", static_cast<long long>(seed), count));
  std::vector<int64_t> out;
  for (Py_ssize_t i = 0; i < PyList_Size(list.get()); ++i) out.push_back(PyLong_AsLongLong(PyList_GetItem(list.get(), i)));
  return out;
}

Values ProblemSession::state_values(PyObject* model) {
  PyRef method = check(PyObject_GetAttrString(model, "state_dict"));
  PyRef no_args = check(PyTuple_New(0));
  PyRef kwargs = check(Py_BuildValue("{s:O}", "keep_vars", Py_True));
  PyRef sd = check(PyObject_Call(method.get(), no_args.get(), kwargs.get()));
  PyRef values = check(PyObject_CallMethod(sd.get(), "values", nullptr));
  PyRef seq = check(PySequence_List(values.get()));
  Values out;
  Py_ssize_t n = PyList_Size(seq.get());
  for (Py_ssize_t i = 0; i < n; ++i) {
    c10::IValue v = from_python(PyList_GetItem(seq.get(), i));
    // Parameters come as Parameters (requires_grad); the candidate gets plain tensors.
    if (v.isTensor()) v = c10::IValue(v.toTensor().detach());
    out.push_back(std::move(v));
  }
  return out;
}

void ProblemSession::prefetch(int64_t seed, int trials) {
  const PyRef kept = PyRef::steal(
      PyObject_CallMethod(problem_.get(), "prefetch", "Li", static_cast<long long>(seed), trials));
  if (!kept.get()) PyErr_Clear();  // prefetch catches the problem's errors; anything else shows where it recurs
}

int64_t ProblemSession::kept_bytes() {
  const PyRef kept = PyRef::steal(PyObject_CallMethod(problem_.get(), "kept", nullptr));
  if (!kept.get()) {
    PyErr_Clear();
    return 0;
  }
  const long long bytes = PyLong_AsLongLong(kept.get());
  if (bytes < 0) {
    PyErr_Clear();
    return 0;
  }
  return bytes;
}

}  // namespace kagent::worker
