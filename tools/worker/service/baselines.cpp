#include "worker/service/baselines.h"

#include "cuda/cuda_error.h"
#include "timer/cold_measurement.h"
#include "worker/protocol/baseline_cache.h"
#include "worker/service/calls.h"

namespace kagent::worker {

Baselines get_baselines(PythonRuntime& py, ProblemSession& problem, const EvalOptions& opts, const DeviceInfo& device,
                        PyObject* reference_model) {
  if (!opts.cache_dir.empty()) {
    if (auto cached = read_baselines(baseline_cache_file(problem.sha256(), device, opts))) {
      // A cached entry lacking what is asked for now is measured again.
      if ((!opts.eager_baseline || cached->eager) &&
          (!opts.compiled_baseline || cached->compiled || !cached->compiled_error.empty()))
        return {cached->eager, cached->compiled, cached->compiled_error, true};
    }
  }

  // Measured here, written by the orchestrator from the reply: the candidate's code shares
  // this process and must find the cache read-only.
  Baselines b;
  const PyRef model = reference_model ? PyRef::borrow(reference_model) : problem.make_model("cuda", opts.seed);
  Values inputs = problem.make_inputs("cuda", opts.seed);
  if (opts.eager_baseline) {
    PythonRunner eager(model);
    b.eager = measure_cold([&] { eager.run(inputs); }, opts.timing);
  }
  if (opts.compiled_baseline) {
    try {
      PythonRunner compiled(py.call(PyFn::CompiledModel, {model}));
      call_reference(compiled, inputs);  // compiles; not timed
      b.compiled = measure_cold([&] { compiled.run(inputs); }, opts.timing);
    } catch (const cuda::ContextLost&) {
      throw;
    } catch (const std::exception& e) {
      b.compiled_error = std::string(e.what()).substr(0, 2000);
    }
  }
  return b;
}

}  // namespace kagent::worker
