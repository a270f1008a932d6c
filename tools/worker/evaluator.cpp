#include "worker/evaluator.h"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "checker/compare.h"

namespace kagent::worker {

EvalOptions eval_options_from_json(const nlohmann::json& j) {
  EvalOptions o;
  o.trials = j.value("trials", o.trials);
  o.seed = j.value("seed", o.seed);
  if (j.contains("atol") && !j["atol"].is_null()) o.tolerance.atol = j["atol"].get<double>();
  if (j.contains("rtol") && !j["rtol"].is_null()) o.tolerance.rtol = j["rtol"].get<double>();
  o.measure = j.value("measure", o.measure);
  o.eager_baseline = j.value("eager_baseline", o.eager_baseline);
  o.compiled_baseline = j.value("compiled_baseline", o.compiled_baseline);
  o.cache_dir = j.value("cache_dir", o.cache_dir);
  o.profile = j.value("profile", o.profile);
  if (j.contains("guards")) o.guards = guard_options_from_json(j["guards"]);
  if (j.contains("timing")) {
    const auto& t = j["timing"];
    o.timing.min_samples = t.value("min_samples", o.timing.min_samples);
    o.timing.min_time_s = t.value("min_time_s", o.timing.min_time_s);
    o.timing.max_noise = t.value("max_noise", o.timing.max_noise);
    o.timing.max_time_s = t.value("max_time_s", o.timing.max_time_s);
    o.timing.max_iterations = t.value("max_iterations", o.timing.max_iterations);
  }
  return o;
}

namespace {

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

// After an exception: is the context still usable?
void rethrow_if_fatal(const std::string& what) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess && is_sticky(e))
    throw CudaFatalError(fmt::format("{} [CUDA context lost: {}]", what, cudaGetErrorString(e)));
  if (what.find("illegal memory access") != std::string::npos || what.find("unspecified launch failure") != std::string::npos)
    throw CudaFatalError(what);
}

}  // namespace

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();
  std::string error = fmt::format("{}: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e));
  if (is_sticky(e)) throw CudaFatalError(error);
  throw std::runtime_error(error);
}

std::vector<at::Tensor> run_checked(Runner& runner, const Values& inputs) {
  std::vector<at::Tensor> out = run_unsynchronized(runner, inputs);
  // Asynchronous kernel faults surface here.
  check_cuda(cudaDeviceSynchronize(), "CUDA error after forward");
  return out;
}

std::vector<at::Tensor> run_unsynchronized(Runner& runner, const Values& inputs) {
  std::string error;
  try {
    return runner.run(inputs);
  } catch (const CudaFatalError&) {
    throw;
  } catch (const c10::Error& e) {
    error = e.what_without_backtrace();
  } catch (const PythonError& e) {
    error = e.message;
  } catch (const std::exception& e) {
    error = e.what();
  }
  rethrow_if_fatal(error);
  throw std::runtime_error(error);
}

void check_correctness(ProblemSession& problem, Runner& candidate, Runner& reference, const EvalOptions& opts,
                       EvalResult& result) {
  Correctness c;
  c.trials = opts.trials;
  for (int t = 0; t < opts.trials; ++t) {
    Values inputs = problem.make_inputs("cuda", opts.seed + 1 + t);
    // Each run gets its own copy: a candidate that writes its inputs cannot corrupt the comparison.
    std::vector<at::Tensor> before = run_checked(candidate, clone_values(inputs));
    std::vector<at::Tensor> expected;
    try {
      expected = reference.run(clone_values(inputs));
    } catch (const PythonError& e) {
      throw std::runtime_error("the reference failed: " + e.message);
    }
    std::vector<at::Tensor> after = run_checked(candidate, clone_values(inputs));

    bool trial_ok = true;
    for (auto [label, got] : {std::pair{"before reference", &before}, std::pair{"after reference", &after}}) {
      if (got->size() != expected.size()) {
        OutputCheck oc;
        oc.ok = false;
        oc.reason = reason::kOutputCount;
        oc.message = fmt::format("forward returned {} output(s), expected {}", got->size(), expected.size());
        c.first_failure = oc;
        c.first_failure_trial = t;
        c.first_failure_run = label;
        trial_ok = false;
        break;
      }
      for (size_t i = 0; i < expected.size(); ++i) {
        OutputCheck oc = compare_output((*got)[i], expected[i], static_cast<int>(i), opts.tolerance);
        c.max_abs_error = std::max(c.max_abs_error, oc.max_abs_error);
        c.max_rel_error = std::max(c.max_rel_error, oc.max_rel_error);
        if (!oc.ok && trial_ok) {
          c.first_failure = oc;
          c.first_failure_trial = t;
          c.first_failure_run = label;
          trial_ok = false;
        }
      }
      if (!trial_ok) break;
    }
    if (!trial_ok) break;  // one failing trial decides; the rest would cost time and say nothing new
    ++c.trials_passed;
  }
  if (c.first_failure) {
    result.status = Status::Wrong;
    result.reason = c.first_failure->reason;
    result.message = fmt::format("trial {} ({}), output {}: {}", c.first_failure_trial + 1, c.first_failure_run,
                                 c.first_failure->output, c.first_failure->message);
  }
  result.correctness = c;
}

}  // namespace kagent::worker
