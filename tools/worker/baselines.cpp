#include "worker/baselines.h"

#include "worker/client/baseline_cache.h"

namespace kagent::worker {

// The orchestrator keys the cache with its copy of these defaults (it sends them explicitly,
// too); a change here must be made there as well.
static_assert(MeasureConfig{}.min_samples == kBaselineKeyDefaults.min_samples);
static_assert(MeasureConfig{}.min_time_s == kBaselineKeyDefaults.min_time_s);
static_assert(MeasureConfig{}.max_noise == kBaselineKeyDefaults.max_noise);
static_assert(MeasureConfig{}.max_time_s == kBaselineKeyDefaults.max_time_s);
static_assert(MeasureConfig{}.max_iterations == kBaselineKeyDefaults.max_iterations);

Baselines get_baselines(PythonRuntime& py, ProblemSession& problem, const EvalOptions& opts,
                        const nlohmann::json& device) {
  if (!opts.cache_dir.empty()) {
    const auto& t = opts.timing;
    BaselineKey key{problem.sha256(), device.value("torch_version", ""), device.value("name", ""), opts.seed,
                    t.min_samples,    t.min_time_s,                     t.max_noise,               t.max_time_s,
                    t.max_iterations};
    if (auto cached = read_baselines(baseline_cache_file(opts.cache_dir, key))) {
      // A cached entry lacking what is asked for now is measured again.
      if ((!opts.eager_baseline || cached->eager) &&
          (!opts.compiled_baseline || cached->compiled || !cached->compiled_error.empty())) {
        Baselines b;
        b.eager = cached->eager;
        b.compiled = cached->compiled;
        b.compiled_error = cached->compiled_error;
        b.cache_hit = true;
        return b;
      }
    }
  }

  // Measured here, written by the orchestrator from the evaluate reply (baseline_cache.h):
  // the candidate's code shares this process and must find the cache read-only.
  Baselines b;
  PyRef model = problem.make_model("cuda", opts.seed);
  Values inputs = problem.make_inputs("cuda", opts.seed);
  if (opts.eager_baseline) {
    PythonRunner eager(model);
    b.eager = measure_cold([&] { eager.run(inputs); }, opts.timing);
  }
  if (opts.compiled_baseline) {
    try {
      PythonRunner compiled(py.call("compiled_model", {model}));
      run_checked(compiled, inputs);  // compiles; not timed
      b.compiled = measure_cold([&] { compiled.run(inputs); }, opts.timing);
    } catch (const CudaFatalError&) {
      throw;
    } catch (const std::exception& e) {
      b.compiled_error = std::string(e.what()).substr(0, 2000);
    }
  }
  return b;
}

}  // namespace kagent::worker
