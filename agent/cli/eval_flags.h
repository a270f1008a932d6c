// The evaluation flags that `kagent eval`, `kagent solve` (and every command that evaluates)
// share, and the one place that turns them into EvaluationSettings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "checker/tolerance_config.h"
#include "evaluation/evaluation_session.h"
#include "result/policy.h"
#include "worker/protocol/phase_budgets.h"

namespace kagent::cli {

struct EvalFlags {
  std::string arch, cache_dir;
  int trials = 5;
  int64_t seed = 42;
  std::optional<double> atol, rtol;
  std::string tolerance = kToleranceV01;  // tolerance preset (checker/tolerance_config.h)
  std::optional<std::string> policy;      // kernelbench | strict; absent: the command's default
  bool no_timing = false, no_profile = false, no_baselines = false, no_compile_baseline = false,
       no_compile_cache = false;
  double timeout_s = 180;
  std::string timing_sample = "launch";  // MeasureConfig::sample's name (timer/measure_config.h)
  int speedup_rounds = 0;                // EvalOptions::speedup_rounds
  // --timing-warmup, --timing-min-time, --timing-max-time, --timing-min-samples: MeasureConfig's
  // warmup_time_s, min_time_s, max_time_s and min_samples over its defaults (absent: the default).
  std::optional<double> timing_warmup_s, timing_min_time_s, timing_max_time_s;
  std::optional<int64_t> timing_min_samples;
  // --phase-budget / --phase-gpu-budget over the defaults (worker/protocol/phase_budgets.h).
  PhaseBudgets phase_budgets = PhaseBudgets::defaults();
  std::vector<int> gpus;  // one worker each; empty: one worker on the default GPU
};

// Registers the flags on `app`. `several_gpus`: --gpus LIST (solve, collect; --gpu is the same
// flag there) instead of --gpu INDEX (eval).
void add_eval_flags(CLI::App& app, EvalFlags& flags, bool several_gpus);
// Whether `app` took them: a command that evaluates, and so starts workers.
bool has_eval_flags(const CLI::App& app);

// --workers-per-gpu N (collect, serve: the commands that feed a GPU from many samples at once):
// workers on each GPU; 0 (the default) leaves it to the pool (default_workers_per_gpu).
void add_workers_per_gpu_flag(CLI::App& app, int& workers_per_gpu);

// The settings the evaluation engine runs with (cache folder defaulted, options filled; the
// policy `default_policy` where --policy was not given).
EvaluationSettings evaluation_settings(const EvalFlags& flags, Policy default_policy = Policy::KernelBench);

// A run folder records them, so that --resume evaluates the same way.
void to_json(nlohmann::json& j, const EvalFlags& f);
void from_json(const nlohmann::json& j, EvalFlags& f);

}  // namespace kagent::cli
