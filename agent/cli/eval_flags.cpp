#include "cli/eval_flags.h"

#include <fmt/format.h>

#include "cli/flag_checks.h"
#include "common/json_optional.h"
#include "common/paths.h"
#include "compiler/nvcc_command.h"
#include "timer/measure_config.h"

namespace kagent::cli {

void add_eval_flags(CLI::App& app, EvalFlags& f, bool several_gpus) {
  app.add_option("--arch", f.arch, "nvcc target, e.g. sm_90a (default: the worker GPU's own)");
  app.add_option("--trials", f.trials, "correctness trials with fresh inputs (default 5)")->check(whole_number(1, 1000));
  app.add_option("--seed", f.seed, "seed for weights and inputs (default 42)")->check(whole_number(0));
  app.add_option("--atol", f.atol, "absolute tolerance for every floating dtype (default per dtype)")
      ->check(number_from(0));
  app.add_option("--rtol", f.rtol, "relative tolerance for every floating dtype (default per dtype)")
      ->check(number_from(0));
  app.add_option("--tolerance", f.tolerance,
                 "tolerance preset: kernelbench-v0.1 (fp32 1e-2, as every published KernelBench number; default) | "
                 "kernelbench-2025 (fp32 1e-4, fp16/bf16 1e-2)")
      ->check(one_of(tolerance_preset_names()));
  app.add_option("--policy", f.policy,
                 "whose rules decide the verdict: kernelbench (library and torch ops allowed, bypasses rejected) | "
                 "strict (the work must be the candidate's own kernels); both verdicts are recorded")
      ->check(one_of(policy_names()));
  app.add_flag("--no-timing", f.no_timing, "check correctness only");
  app.add_flag("--no-profile", f.no_profile, "skip the CUPTI profile of a correct candidate");
  app.add_flag("--no-baselines", f.no_baselines, "do not time eager or torch.compile");
  app.add_flag("--no-compile-baseline", f.no_compile_baseline, "do not time torch.compile");
  app.add_option("--timing-sample", f.timing_sample,
                 "what a timing sample is: launch (the event time with the host's launch latency in, as "
                 "KernelBench's harness; default) | gpu (the stream held until the call is issued: the GPU's time) | "
                 "steady (held; the GPU's time or the host's issue time, whichever is longer)")
      ->check(one_of(timing_sample_names()));
  app.add_option("--speedup-rounds", f.speedup_rounds,
                 "paired rounds of eager and the candidate after the timing, for a candidate under 1 ms: the "
                 "speedup's interval, which says where the timer cannot pin it (0: none, the default; else 2 to 20; "
                 "5 gives a 94% interval)")
      ->check(whole_number(0, kMaxSpeedupRounds) &
              CLI::Validator(
                  [](std::string& s) -> std::string { return s == "1" ? "'1' round has no interval (0, or 2 to 20)" : ""; },
                  ""));
  // The timing loop's floors and cap (timer/measure_config.h): seconds, at most a minute.
  const MeasureConfig timing_defaults;
  const auto timing_seconds = [&app](const char* flag, std::optional<double>& value, const char* what,
                                     double fallback, double least) {
    app.add_option(flag, value, fmt::format("{} (default {})", what, fallback))
        ->type_name("SECONDS")
        ->check(number_in(least, 60));
  };
  timing_seconds("--timing-warmup", f.timing_warmup_s,
                 "least wall seconds of untimed warm-up runs before a timing loop, of 3 runs at least",
                 timing_defaults.warmup_time_s, 0);
  timing_seconds("--timing-min-time", f.timing_min_time_s,
                 "least wall seconds of a timing loop before its noise may stop it (and --timing-min-samples)",
                 timing_defaults.min_time_s, 0);
  timing_seconds("--timing-max-time", f.timing_max_time_s,
                 "most wall seconds of a timing loop, and of its warm-up, whatever the noise", timing_defaults.max_time_s,
                 0.001);
  app.add_option("--timing-min-samples", f.timing_min_samples,
                 fmt::format("least timed samples of a timing loop before its noise may stop it (default {})",
                             timing_defaults.min_samples))
      ->type_name("N")
      ->check(whole_number(1, 100000));
  app.add_option("--timeout", f.timeout_s, "seconds before a hanging evaluation is killed (default 180)")
      ->check(number_from(0, /*above=*/true));
  // PHASE=SECONDS items, checked while parsing (one line, exit 2), applied over the defaults.
  const CLI::Validator budget(
      [](std::string& item) -> std::string {
        try {
          (void)parse_phase_budget(item);
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
        return {};
      },
      "");
  const auto budgets = [&f](bool gpu) {
    return [&f, gpu](const std::vector<std::string>& items) {
      for (const auto& item : items) {
        const auto [phase, seconds] = parse_phase_budget(item);
        f.phase_budgets.set(phase, gpu, seconds);
      }
    };
  };
  app.add_option_function<std::vector<std::string>>(
         kPhaseBudgetFlag, budgets(false),
         "PHASE=SECONDS,...: seconds a phase of an evaluation may run, waits for the GPU's timing lock not "
         "counted; past it the candidate's verdict is timeout (phase_budget). Phases: " + phase_list() +
             "; none lifts one (default: " + PhaseBudgets::defaults().listed(false) + ")")
      ->type_name("PHASE=SECONDS")
      ->delimiter(',')
      ->check(budget);
  app.add_option_function<std::vector<std::string>>(
         kPhaseGpuBudgetFlag, budgets(true),
         "PHASE=SECONDS,...: seconds a phase may hold the GPU (its timing lock, exclusively or shared: what the "
         "GPU's other workers' timings wait for); none lifts one (default: " +
             PhaseBudgets::defaults().listed(true) + ")")
      ->type_name("PHASE=SECONDS")
      ->delimiter(',')
      ->check(budget);
  if (several_gpus)
    app.add_option("--gpus,--gpu", f.gpus,
                   "GPU indices to evaluate on: a worker on each, more where --workers-per-gpu says so (default: the "
                   "default GPU)")
        ->delimiter(',')
        ->check(whole_number(0));
  else
    app.add_option_function<int>(
           "--gpu", [&f](int g) { f.gpus = {g}; }, "GPU index for the worker (CUDA_VISIBLE_DEVICES)")
        ->check(whole_number(0));
  app.add_option("--cache-dir", f.cache_dir, "cache folder for compiled candidates, specs and baselines")
      ->check([](const std::string& v) { return folder_nvcc_cannot_take(v).value_or(""); });
  app.add_flag("--no-compile-cache", f.no_compile_cache, "compile even when a cached build exists");
}

void add_workers_per_gpu_flag(CLI::App& app, int& workers_per_gpu) {
  app.add_option("--workers-per-gpu", workers_per_gpu,
                 "workers on each GPU: their problem loads, correctness checks and guards overlap, their timings "
                 "take turns under the GPU's timing lock (default: one per 4 CPU cores of each GPU's share, 2 to 4)")
      ->check(whole_number(1, 16));
}

bool has_eval_flags(const CLI::App& app) { return app.get_option_no_throw("--timing-sample") != nullptr; }

EvaluationSettings evaluation_settings(const EvalFlags& f, Policy default_policy) {
  EvaluationSettings s;
  s.cache_dir = f.cache_dir.empty() ? cache_root() : f.cache_dir;
  s.arch = f.arch;
  s.gpus = f.gpus;
  s.timeout_s = f.timeout_s;
  s.phase_budgets = f.phase_budgets;
  s.use_compile_cache = !f.no_compile_cache;
  EvalOptions& o = s.options;
  o.trials = f.trials;
  o.seed = f.seed;
  o.tolerance = {f.atol, f.rtol, f.tolerance};
  o.policy = f.policy ? policy_from_string(*f.policy) : default_policy;
  o.measure = !f.no_timing;
  o.timing.sample = timing_sample_from_name(f.timing_sample).value_or(TimingSample::Launch);
  o.speedup_rounds = f.speedup_rounds;
  if (f.timing_warmup_s) o.timing.warmup_time_s = *f.timing_warmup_s;
  if (f.timing_min_time_s) o.timing.min_time_s = *f.timing_min_time_s;
  if (f.timing_max_time_s) o.timing.max_time_s = *f.timing_max_time_s;
  if (f.timing_min_samples) o.timing.min_samples = *f.timing_min_samples;
  o.eager_baseline = !f.no_baselines;
  o.compiled_baseline = !f.no_baselines && !f.no_compile_baseline;
  o.profile = !f.no_profile;
  o.cache_dir = s.cache_dir;
  return s;
}

void to_json(nlohmann::json& j, const EvalFlags& f) {
  j = {{"arch", f.arch},
       {"cache_dir", f.cache_dir},
       {"trials", f.trials},
       {"seed", f.seed},
       {"no_timing", f.no_timing},
       {"no_profile", f.no_profile},
       {"no_baselines", f.no_baselines},
       {"no_compile_baseline", f.no_compile_baseline},
       {"no_compile_cache", f.no_compile_cache},
       {"timeout", f.timeout_s},
       {"gpus", f.gpus},
       {"tolerance", f.tolerance},
       {"timing_sample", f.timing_sample},
       {"speedup_rounds", f.speedup_rounds},
       {"phase_budgets", f.phase_budgets}};
  put_optional(j, "policy", f.policy);
  put_optional(j, "atol", f.atol);
  put_optional(j, "rtol", f.rtol);
  put_optional(j, "timing_warmup_s", f.timing_warmup_s);
  put_optional(j, "timing_min_time_s", f.timing_min_time_s);
  put_optional(j, "timing_max_time_s", f.timing_max_time_s);
  put_optional(j, "timing_min_samples", f.timing_min_samples);
}

void from_json(const nlohmann::json& j, EvalFlags& f) {
  f.arch = get_or<std::string>(j, "arch", f.arch);
  f.cache_dir = get_or<std::string>(j, "cache_dir", f.cache_dir);
  f.trials = get_or(j, "trials", f.trials);
  f.seed = get_or(j, "seed", f.seed);
  get_optional(j, "atol", f.atol);
  get_optional(j, "rtol", f.rtol);
  f.tolerance = get_or<std::string>(j, "tolerance", f.tolerance);
  get_optional(j, "policy", f.policy);
  f.no_timing = get_or(j, "no_timing", f.no_timing);
  f.no_profile = get_or(j, "no_profile", f.no_profile);
  f.no_baselines = get_or(j, "no_baselines", f.no_baselines);
  f.no_compile_baseline = get_or(j, "no_compile_baseline", f.no_compile_baseline);
  f.no_compile_cache = get_or(j, "no_compile_cache", f.no_compile_cache);
  f.timeout_s = get_or(j, "timeout", f.timeout_s);
  f.gpus = get_or(j, "gpus", f.gpus);
  f.timing_sample = get_or<std::string>(j, "timing_sample", f.timing_sample);
  f.speedup_rounds = get_or(j, "speedup_rounds", f.speedup_rounds);
  // A run recorded before phase budgets existed is resumed with the defaults.
  f.phase_budgets = get_or(j, "phase_budgets", f.phase_budgets);
  get_optional(j, "timing_warmup_s", f.timing_warmup_s);
  get_optional(j, "timing_min_time_s", f.timing_min_time_s);
  get_optional(j, "timing_max_time_s", f.timing_max_time_s);
  get_optional(j, "timing_min_samples", f.timing_min_samples);
}

}  // namespace kagent::cli
