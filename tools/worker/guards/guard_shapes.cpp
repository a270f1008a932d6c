#include "worker/guards/guard_shapes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checker/compare.h"
#include "cuda/cuda_error.h"
#include "worker/service/calls.h"
#include "checker/compare.h"
#include "worker/protocol/guard_options.h"

namespace kagent::worker {

namespace {
std::string describe_shapes(const Values& inputs) {
  std::vector<std::string> parts;
  for (const auto& v : inputs) parts.push_back(v.isTensor() ? format_shape(v.toTensor().sizes()) : v.tagKind());
  return fmt::format("{}", fmt::join(parts, ", "));
}

GuardFinding flag(const std::string& why) {
  return {guard::kShapeGeneralization, kGuardFlag, "unavailable: " + why};
}
}  // namespace

std::optional<GuardFinding> check_extra_shapes(PythonRuntime& py, ProblemSession& problem, Runner& candidate,
                                               Runner& reference, int64_t seed, const ToleranceConfig& tolerance) {
  std::vector<Values> sets;
  try {
    PyRef lists = py.call(PyFn::ExtraInputs, {problem.problem(), check(PyUnicode_FromString("cuda")),
                                           check(PyLong_FromLongLong(seed))});
    const Py_ssize_t n = PyList_Size(lists.get());
    for (Py_ssize_t i = 0; i < n; ++i) {
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
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string which = fmt::format("extra input set {} (shapes {})", s + 1, describe_shapes(sets[s]));
    std::vector<at::Tensor> expected;
    try {
      expected = call_reference(reference, sets[s]);
    } catch (const EvaluatorError& e) {  // a reference that cannot run other shapes: nothing to judge
      return flag(fmt::format("on {}: {}", which, e.what()));
    }
    std::vector<at::Tensor> got;
    try {
      got = call_candidate(candidate, clone_values(sets[s]));
    } catch (const cuda::ContextLost&) {
      throw;
    } catch (const std::exception& e) {
      std::string what = e.what();
      return GuardFinding{guard::kShapeGeneralization, kGuardReject,
                          fmt::format("forward fails on {}: {}", which, what.substr(0, what.find('\n')).substr(0, 300))};
    }
    if (const auto bad = first_mismatch(got, expected, tolerance))
      return GuardFinding{guard::kShapeGeneralization, kGuardReject,
                          fmt::format("wrong on {} (correct on get_inputs()'s shapes): output {}: {}", which,
                                      bad->output, bad->message)};
  }
  return std::nullopt;
}

}  // namespace kagent::worker
