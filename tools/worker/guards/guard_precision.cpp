#include "worker/guards/guard_precision.h"

#include <cmath>

#include <ATen/ops/where.h>
#include <fmt/format.h>

#include "checker/compare.h"
#include "worker/service/calls.h"

namespace kagent::worker {

namespace {

PyRef list_of(const Values& values) {
  PyRef list = check(PyList_New(static_cast<Py_ssize_t>(values.size())));
  for (size_t i = 0; i < values.size(); ++i) {
    PyRef item = to_python(values[i]);
    Py_INCREF(item.get());  // SET_ITEM steals the reference `item` still owns
    PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), item.get());
  }
  return list;
}

PyRef str(const std::string& s) { return check(PyUnicode_FromString(s.c_str())); }

// The rounding hypotheses that lose precision against `dtype`.
std::vector<std::string> roundings_for(at::ScalarType dtype) {
  if (dtype == at::kFloat || dtype == at::kDouble) return {"tf32", "bfloat16"};
  if (dtype == at::kHalf) return {"bfloat16"};
  return {};
}

bool has_floating(const Values& values) {
  for (const auto& v : values)
    if (v.isTensor() && v.toTensor().is_floating_point()) return true;
  return false;
}

}  // namespace

std::optional<double> mean_relative_error(const at::Tensor& got_in, const at::Tensor& truth_in) {
  if (!got_in.defined() || !truth_in.defined() || got_in.sizes() != truth_in.sizes() || truth_in.numel() == 0)
    return std::nullopt;
  const at::Tensor truth = truth_in.detach().to(at::kDouble).reshape(-1);
  const at::Tensor got = got_in.detach().to(truth.device(), at::kDouble).reshape(-1);
  const at::Tensor finite = got.isfinite().logical_and(truth.isfinite());
  const at::Tensor t = at::where(finite, truth, 0.0);
  const double rms = t.pow(2).mean().sqrt().item<double>();
  if (!(rms > 0) || !std::isfinite(rms)) return std::nullopt;
  const at::Tensor counted = finite.logical_and(truth.abs().gt(0.1 * rms));
  const double n = counted.sum().item<double>();
  if (n == 0) return std::nullopt;
  const at::Tensor rel = at::where(counted, got.sub(truth).abs().div(truth.abs()), 0.0);
  return rel.sum().item<double>() / n;
}

std::optional<std::vector<at::Tensor>> reference_fp64(PythonRuntime& py, PyObject* model, const Values& inputs,
                                                      std::string& why, const std::string& rounding,
                                                      const std::string& scope) {
  PyRef out = py.call(PyFn::ReferenceFp64, {PyRef::borrow(model), list_of(inputs),
                                            rounding.empty() ? PyRef::borrow(Py_None) : str(rounding), str(scope)});
  if (PyUnicode_Check(out.get())) {
    why = to_std_string(out.get());
    return std::nullopt;
  }
  return outputs_from_python(out.get());
}

bool worth_explaining(const PrecisionErrors& e, const GuardOptions& opts) {
  return e.candidate > 1e-6 && e.candidate > opts.precision_excess * e.eager;
}

namespace {
bool explained(const PrecisionErrors& e, const GuardOptions& opts) {
  if (!worth_explaining(e, opts)) return false;
  for (const auto& h : e.hypotheses)
    if (h.second * opts.precision_explained <= e.candidate) return true;
  return false;
}
}  // namespace

std::optional<std::string> precision_lowered(const PrecisionErrors& e, const GuardOptions& opts) {
  if (worth_explaining(e, opts))
    for (const auto& [name, err] : e.hypotheses)
      if (err * opts.precision_explained <= e.candidate)
        return fmt::format("mean relative error {:.3g} against the exact fp64 truth (eager PyTorch {:.3g}, {:.0f}x), "
                           "but {:.3g} against a truth computed from {}: the candidate computes on rounded values",
                           e.candidate, e.eager, e.eager > 0 ? e.candidate / e.eager : INFINITY, err, name);
  if (e.candidate > opts.precision_floor && e.candidate > opts.precision_ratio * e.eager)
    return fmt::format("mean relative error {:.3g} against an fp64 truth, eager PyTorch's {:.3g} ({:.0f}x; allowed: "
                       "{:g}x or under {:g}): computed at lower precision",
                       e.candidate, e.eager, e.eager > 0 ? e.candidate / e.eager : INFINITY, opts.precision_ratio,
                       opts.precision_floor);
  return std::nullopt;
}

std::optional<GuardFinding> check_precision(PythonRuntime& py, ProblemSession& problem, PyObject* reference_model,
                                            Runner& candidate, Runner& reference, int64_t seed,
                                            const GuardOptions& opts, const ToleranceConfig& tolerance,
                                            std::string& note, const std::string& device) {
  PyRef made = py.call(PyFn::PrecisionInputs, {problem.problem(), PyRef::borrow(reference_model), str(device),
                                               check(PyLong_FromLongLong(seed)),
                                               check(PyLong_FromLongLong(opts.precision_max_input_bytes))});
  const Values inputs = [&] {
    Values v;
    PyObject* list = PyTuple_GetItem(made.get(), 0);
    for (Py_ssize_t k = 0; k < PyList_Size(list); ++k) v.push_back(from_python(PyList_GetItem(list, k)));
    return v;
  }();
  note = to_std_string(PyTuple_GetItem(made.get(), 1));

  std::vector<at::Tensor> got;
  try {
    got = call_candidate(candidate, clone_values(inputs));
  } catch (const CandidateError& e) {  // other sizes are the shape guard's concern
    note += "; not checked: the candidate fails on these inputs";
    return std::nullopt;
  }
  const std::vector<at::Tensor> eager = call_reference(reference, clone_values(inputs));
  // The fp64 runs call the reference model itself: on a stateful problem each starts from the
  // state at construction, as the compared calls do.
  std::string why;
  restore_reference_state(reference);
  const auto truth = reference_fp64(py, reference_model, inputs, why);
  if (!truth) {
    note += "; not checked: " + why;
    return std::nullopt;
  }
  // The parameters' walk only when an error needs explaining (rare): not on every evaluation.
  std::optional<bool> params_floating_once;
  const auto params_floating = [&] {
    if (!params_floating_once) params_floating_once = has_floating(problem.state_values(reference_model));
    return *params_floating_once;
  };
  const bool inputs_floating = has_floating(inputs);
  for (size_t i = 0; i < got.size() && i < eager.size() && i < truth->size(); ++i) {
    const auto dtype = eager[i].defined() ? eager[i].scalar_type() : at::kLong;
    if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) continue;
    const auto cand_err = mean_relative_error(got[i], (*truth)[i]);
    const auto eager_err = mean_relative_error(eager[i], (*truth)[i]);
    if (!cand_err || !eager_err) continue;
    PrecisionErrors e{*cand_err, *eager_err, {}};
    if (worth_explaining(e, opts)) {
      std::vector<std::string> scopes = {"all"};
      if (inputs_floating && params_floating()) scopes.insert(scopes.end(), {"inputs", "params"});
      for (const auto& rounding : roundings_for(dtype)) {
        for (const auto& scope : scopes) {
          std::string unused;
          restore_reference_state(reference);
          const auto rounded = reference_fp64(py, reference_model, inputs, unused, rounding, scope);
          if (!rounded || i >= rounded->size()) continue;
          if (const auto err = mean_relative_error(got[i], (*rounded)[i]))
            e.hypotheses.emplace_back(fmt::format("{} rounded to {} ({} mantissa bits)",
                                                  scope != "all"     ? scope
                                                  : params_floating() ? "inputs and parameters"
                                                                    : "inputs",
                                                  rounding == "tf32" ? "fp16/TF32" : "bf16",
                                                  rounding == "tf32" ? 10 : 7),
                                      *err);
          if (explained(e, opts)) break;
        }
        if (explained(e, opts)) break;
      }
    }
    if (const auto reason = precision_lowered(e, opts)) {
      const OutputCheck vs_truth = compare_output(got[i], (*truth)[i].to(got[i].scalar_type()), static_cast<int>(i), tolerance);
      return GuardFinding{guard::kPrecisionLowered, kGuardReject,
                          fmt::format("output {}: {} ({}); against the float64 truth at the tolerance: {}", i, *reason,
                                      note, vs_truth.ok ? "within" : vs_truth.message),
                          vs_truth.ok ? kGuardFlag : kGuardReject};
    }
  }
  return std::nullopt;
}

}  // namespace kagent::worker
