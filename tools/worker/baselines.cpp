#include "worker/baselines.h"

#include <filesystem>

#include <fmt/format.h>

#include "common/files.h"
#include "common/sha256.h"

namespace kagent::worker {

namespace fs = std::filesystem;

namespace {

std::string cache_key(const ProblemSession& problem, const EvalOptions& opts, const nlohmann::json& device) {
  const auto& t = opts.timing;
  return sha256_hex(fmt::format("v1|{}|{}|{}|{}|{}|{}|{}|{}|{}", problem.sha256(), device.value("torch_version", ""),
                                device.value("name", ""), opts.seed, t.min_samples, t.min_time_s, t.max_noise,
                                t.max_time_s, t.max_iterations))
      .substr(0, 32);
}

nlohmann::json to_json(const Baselines& b) {
  nlohmann::json j;
  j["eager"] = b.eager ? nlohmann::json(*b.eager) : nlohmann::json(nullptr);
  j["compiled"] = b.compiled ? nlohmann::json(*b.compiled) : nlohmann::json(nullptr);
  j["compiled_error"] = b.compiled_error;
  return j;
}

Baselines from_json(const nlohmann::json& j) {
  Baselines b;
  if (!j["eager"].is_null()) b.eager = j["eager"].get<TimingStats>();
  if (!j["compiled"].is_null()) b.compiled = j["compiled"].get<TimingStats>();
  b.compiled_error = j.value("compiled_error", "");
  return b;
}

}  // namespace

Baselines get_baselines(PythonRuntime& py, ProblemSession& problem, const EvalOptions& opts,
                        const nlohmann::json& device) {
  fs::path file;
  if (!opts.cache_dir.empty()) {
    file = fs::path(opts.cache_dir) / "baselines" / (cache_key(problem, opts, device) + ".json");
    if (fs::exists(file)) {
      try {
        Baselines b = from_json(nlohmann::json::parse(read_file(file)));
        // A cached entry lacking what is asked for now is measured again.
        if ((!opts.eager_baseline || b.eager) && (!opts.compiled_baseline || b.compiled || !b.compiled_error.empty())) {
          b.cache_hit = true;
          return b;
        }
      } catch (const std::exception&) {
        // A torn or old entry: measure again and overwrite it.
      }
    }
  }

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
  if (!file.empty()) {
    try {
      fs::create_directories(file.parent_path());
      write_file_atomic(file, to_json(b).dump(2));  // a concurrent writer's copy is just as good
    } catch (const std::exception&) {
      // Unwritable cache: the numbers are still returned; they are measured again next time.
    }
  }
  return b;
}

}  // namespace kagent::worker
