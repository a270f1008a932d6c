#include "worker/guards/guard_shapes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checker/compare.h"
#include "cuda/cuda_error.h"
#include "worker/protocol/guard_options.h"
#include "worker/service/calls.h"

namespace kagent::worker {

namespace {

std::string describe_shapes(const Values& inputs) {
  std::vector<std::string> parts;
  for (const auto& v : inputs) parts.push_back(v.isTensor() ? format_shape(v.toTensor().sizes()) : v.tagKind());
  return fmt::format("{}", fmt::join(parts, ", "));
}

GuardFinding flag(const std::string& why) { return {guard::kShapeGeneralization, kGuardFlag, "unavailable: " + why}; }

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')).substr(0, 300); }

}  // namespace

std::optional<GuardFinding> check_extra_shapes(PythonRuntime& py, ProblemSession& problem, PyObject* reference_model,
                                               Runner& candidate, Runner& reference, int64_t seed,
                                               const ToleranceConfig& tolerance) {
  std::vector<Values> sets;
  std::string note;
  try {
    PyRef made = py.call(PyFn::ExtraInputs, {problem.problem(), PyRef::borrow(reference_model),
                                             check(PyUnicode_FromString("cuda")), check(PyLong_FromLongLong(seed))});
    note = to_std_string(check(PyObject_GetItem(made.get(), check(PyUnicode_FromString("note")).get())).get());
    PyRef lists = check(PyObject_GetItem(made.get(), check(PyUnicode_FromString("sets")).get()));
    for (Py_ssize_t i = 0; i < PyList_Size(lists.get()); ++i) {
      PyObject* list = PyList_GetItem(lists.get(), i);
      Values inputs;
      for (Py_ssize_t k = 0; k < PyList_Size(list); ++k) inputs.push_back(from_python(PyList_GetItem(list, k)));
      sets.push_back(std::move(inputs));
    }
  } catch (const PythonError& e) {
    return flag(e.message);
  } catch (const std::invalid_argument& e) {
    return flag(e.what());
  }
  if (sets.empty()) return flag(note);
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string which = fmt::format("extra input set {} (shapes {}; {})", s + 1, describe_shapes(sets[s]), note);
    std::vector<at::Tensor> expected;
    try {
      expected = call_reference(reference, clone_values(sets[s]));
    } catch (const EvaluatorError& e) {  // a reference that cannot run other shapes: nothing to judge
      return flag(fmt::format("on {}: {}", which, e.what()));
    }
    std::vector<at::Tensor> got;
    try {
      got = call_candidate(candidate, clone_values(sets[s]));
    } catch (const CandidateError& e) {
      return GuardFinding{guard::kShapeGeneralization, kGuardReject,
                          fmt::format("forward fails on {}: {}", which, first_line(e.what()))};
    }
    if (const auto bad = first_mismatch(got, expected, tolerance))
      return GuardFinding{guard::kShapeGeneralization, kGuardReject,
                          fmt::format("wrong on {} (correct on get_inputs()'s shapes): output {}: {}", which,
                                      bad->output, bad->message)};
  }
  return std::nullopt;
}

}  // namespace kagent::worker
