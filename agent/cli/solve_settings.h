// The settings of a refinement run that `kagent solve` and `kagent collect` share: samples,
// turns, answer format, history, stopping rules, prompts, evaluation and LLM flags; the
// flags that set them, and the config.json a run folder records them in (so --resume
// continues the same run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/eval_flags.h"
#include "llm/llm_config.h"
#include "loop/problem_run.h"

namespace kagent::cli {

struct SolveSettings {
  std::string format = "cuda", history = "kernels", prompts;
  int samples = 1, turns = 4;
  std::optional<int64_t> history_tokens, max_tokens;
  std::optional<double> target_speedup, max_seconds;
  EvalFlags eval;
  llm::LlmFlags llm;
};

// --format, -n/--samples, -t/--turns, --history, --history-tokens, --target-speedup,
// --max-tokens-per-sample, --max-seconds-per-sample, --prompts, the eval flags (--gpus) and the LLM flags.
void add_solve_flags(CLI::App& app, SolveSettings& s);

// A run folder's config.json: the problem, these settings and the resolved model.
nlohmann::json run_config(const SolveSettings& s, const std::string& problem, const llm::LlmConfig& cfg);

// --resume: the run's own settings come back from its config.json; LLM flags given now win
// (a key, a new server address), the rest of the LLM settings come from the run. Returns the
// run's problem (or `problem` when the config names none).
std::string apply_run_config(SolveSettings& s, const nlohmann::json& config, const std::string& problem = {});

// The loop's options for one problem (format, history, limits).
loop::ProblemRunOptions problem_run_options(const SolveSettings& s);

}  // namespace kagent::cli
