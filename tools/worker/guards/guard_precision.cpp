#include "worker/guards/guard_precision.h"

#include <cmath>

#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <fmt/format.h>

#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::optional<double> relative_l2_error(const at::Tensor& got_in, const at::Tensor& truth_in) {
  if (!got_in.defined() || !truth_in.defined() || got_in.sizes() != truth_in.sizes() || truth_in.numel() == 0)
    return std::nullopt;
  const at::Tensor truth = truth_in.detach().to(at::kDouble);
  const at::Tensor got = got_in.detach().to(truth.device(), at::kDouble);
  const at::Tensor finite = got.isfinite().logical_and(truth.isfinite());
  const at::Tensor zero = at::zeros_like(truth);
  const double truth_norm = at::where(finite, truth, zero).norm().item<double>();
  if (!(truth_norm > 0) || !std::isfinite(truth_norm)) return std::nullopt;
  const double diff_norm = at::where(finite, got.sub(truth), zero).norm().item<double>();
  return diff_norm / truth_norm;
}

std::optional<std::vector<at::Tensor>> reference_fp64(PythonRuntime& py, PyObject* model, const Values& inputs,
                                                      std::string& why) {
  PyRef list = check(PyList_New(static_cast<Py_ssize_t>(inputs.size())));
  for (size_t i = 0; i < inputs.size(); ++i) {
    PyRef item = to_python(inputs[i]);
    PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), item.get());
    Py_INCREF(item.get());  // SET_ITEM steals the reference `item` still owns
  }
  PyRef out = py.call(PyFn::ReferenceFp64, {PyRef::borrow(model), list});
  if (PyUnicode_Check(out.get())) {
    why = to_std_string(out.get());
    return std::nullopt;
  }
  return outputs_from_python(out.get());
}

bool precision_lowered(double candidate_error, double eager_error, double ratio, double floor) {
  return candidate_error > floor && candidate_error > ratio * eager_error;
}

std::optional<GuardFinding> check_precision(const std::vector<at::Tensor>& candidate,
                                            const std::vector<at::Tensor>& eager,
                                            const std::vector<at::Tensor>& truth, double ratio, double floor) {
  for (size_t i = 0; i < candidate.size() && i < eager.size() && i < truth.size(); ++i) {
    const auto dtype = eager[i].defined() ? eager[i].scalar_type() : at::kLong;
    if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) continue;
    const auto cand_err = relative_l2_error(candidate[i], truth[i]);
    const auto eager_err = relative_l2_error(eager[i], truth[i]);
    if (!cand_err || !eager_err) continue;
    if (precision_lowered(*cand_err, *eager_err, ratio, floor))
      return GuardFinding{guard::kPrecisionLowered, kGuardReject,
                          fmt::format("output {}: relative L2 error against an fp64 reference {:.3g}, eager PyTorch's "
                                      "{:.3g} ({:.0f}x; allowed: {:g}x or under {:g}): computed at lower precision",
                                      i, *cand_err, *eager_err, *eager_err > 0 ? *cand_err / *eager_err : INFINITY,
                                      ratio, floor)};
  }
  return std::nullopt;
}

}  // namespace kagent::worker
