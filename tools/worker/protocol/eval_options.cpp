#include "worker/protocol/eval_options.h"

#include <stdexcept>
#include <string>

#include "common/json_optional.h"

namespace kagent {

void to_json(nlohmann::json& j, const EvalOptions& o) {
  const MeasureConfig& t = o.timing;
  j = {{"trials", o.trials},
       {"seed", o.seed},
       {"measure", o.measure},
       {"eager_baseline", o.eager_baseline},
       {"compiled_baseline", o.compiled_baseline},
       {"cache_dir", o.cache_dir},
       {"profile", o.profile},
       {"policy", to_string(o.policy)},
       {"tolerance_preset", o.tolerance.preset},
       {"guards", o.guards},
       {"speedup_rounds", o.speedup_rounds},
       {"timing",
        {{"warmup_runs", t.warmup_runs},
         {"warmup_time_s", t.warmup_time_s},
         {"min_samples", t.min_samples},
         {"min_time_s", t.min_time_s},
         {"max_noise", t.max_noise},
         {"max_time_s", t.max_time_s},
         {"max_iterations", t.max_iterations},
         {"flush_l2", t.flush_l2},
         {"sample", timing_sample_name(t.sample)}}}};
  put_optional(j, "atol", o.tolerance.atol);
  put_optional(j, "rtol", o.tolerance.rtol);
}

void from_json(const nlohmann::json& j, EvalOptions& o) {
  o = EvalOptions();
  o.trials = get_or(j, "trials", o.trials);
  o.seed = get_or(j, "seed", o.seed);
  get_optional(j, "atol", o.tolerance.atol);
  get_optional(j, "rtol", o.tolerance.rtol);
  o.tolerance.preset = get_or<std::string>(j, "tolerance_preset", o.tolerance.preset);
  o.policy = policy_from_string(get_or<std::string>(j, "policy", to_string(o.policy)));
  o.measure = get_or(j, "measure", o.measure);
  o.eager_baseline = get_or(j, "eager_baseline", o.eager_baseline);
  o.compiled_baseline = get_or(j, "compiled_baseline", o.compiled_baseline);
  o.cache_dir = get_or(j, "cache_dir", o.cache_dir);
  o.profile = get_or(j, "profile", o.profile);
  if (j.contains("guards")) o.guards = worker::guard_options_from_json(j["guards"]);
  o.speedup_rounds = get_or(j, "speedup_rounds", o.speedup_rounds);
  if (o.speedup_rounds == 1 || o.speedup_rounds < 0 || o.speedup_rounds > kMaxSpeedupRounds)
    throw std::invalid_argument("speedup_rounds must be 0 or 2 to " + std::to_string(kMaxSpeedupRounds));
  if (j.contains("timing") && j["timing"].is_object()) {
    const auto& t = j["timing"];
    MeasureConfig& m = o.timing;
    m.warmup_runs = get_or(t, "warmup_runs", m.warmup_runs);
    m.warmup_time_s = get_or(t, "warmup_time_s", m.warmup_time_s);
    m.min_samples = get_or(t, "min_samples", m.min_samples);
    m.min_time_s = get_or(t, "min_time_s", m.min_time_s);
    m.max_noise = get_or(t, "max_noise", m.max_noise);
    m.max_time_s = get_or(t, "max_time_s", m.max_time_s);
    m.max_iterations = get_or(t, "max_iterations", m.max_iterations);
    m.flush_l2 = get_or(t, "flush_l2", m.flush_l2);
    if (const auto s = timing_sample_from_name(get_or<std::string>(t, "sample", ""))) m.sample = *s;
  }
}

}  // namespace kagent
