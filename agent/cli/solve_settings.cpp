#include "cli/solve_settings.h"

#include "cli/flag_checks.h"
#include "cli/llm_flags.h"
#include "common/json_optional.h"

namespace kagent::cli {

void add_solve_flags(CLI::App& app, SolveSettings& s) {
  app.add_option("--format", s.format, "answer format: cuda (default) | kernelbench")
      ->check(one_of({"cuda", "kernelbench"}));
  app.add_option("-n,--samples", s.samples, "parallel samples (default 1)")->check(whole_number(1, 1024));
  app.add_option("-t,--turns", s.turns, "refinement turns per sample (default 4)")->check(whole_number(1, 1000));
  app.add_option("--history", s.history, "what later turns see of earlier ones: full | kernels (default) | last")
      ->check(one_of({"full", "kernels", "last"}));
  app.add_option("--history-tokens", s.history_tokens, "token budget of a request: the oldest turns go first")
      ->check(whole_number(1));
  app.add_option("--target-speedup", s.target_speedup, "stop a sample once a correct turn reaches this speedup over eager")
      ->check(number_from(0, /*above=*/true));
  app.add_option("--max-tokens-per-sample", s.max_tokens, "stop a sample after this many tokens (prompt + completion)")
      ->check(whole_number(1));
  app.add_option("--max-seconds-per-sample", s.max_seconds, "stop a sample after this much model + evaluation time")
      ->check(number_from(0, /*above=*/true));
  app.add_option("--prompts", s.prompts, "folder of prompt templates replacing prompts/ (same file names)");
  add_eval_flags(app, s.eval, /*several_gpus=*/true);
  add_llm_flags(app, s.llm);
}

nlohmann::json run_config(const SolveSettings& s, const std::string& problem, const llm::LlmConfig& cfg) {
  nlohmann::json sampling = nlohmann::json::object();
  if (cfg.sampling.temperature) sampling["temperature"] = *cfg.sampling.temperature;
  if (cfg.sampling.top_p) sampling["top_p"] = *cfg.sampling.top_p;
  if (cfg.sampling.max_tokens) sampling["max_tokens"] = *cfg.sampling.max_tokens;
  if (cfg.sampling.reasoning_effort) sampling["reasoning_effort"] = *cfg.sampling.reasoning_effort;
  return {{"problem", problem},
          {"format", s.format},
          {"samples", s.samples},
          {"turns", s.turns},
          {"history", s.history},
          {"history_tokens", json_or_null(s.history_tokens)},
          {"target_speedup", json_or_null(s.target_speedup)},
          {"max_tokens", json_or_null(s.max_tokens)},
          {"max_seconds", json_or_null(s.max_seconds)},
          {"prompts", s.prompts},
          {"eval", s.eval},
          {"llm", {{"provider", cfg.provider}, {"model", cfg.model}, {"base_url", cfg.base_url}, {"sampling", sampling}}}};
}

std::string apply_run_config(SolveSettings& s, const nlohmann::json& c, const std::string& problem) {
  // A null anywhere (a hand-edited file, an older kagent) keeps the default: get_or, never value().
  s.format = get_or<std::string>(c, "format", s.format);
  s.samples = get_or(c, "samples", s.samples);
  s.turns = get_or(c, "turns", s.turns);
  s.history = get_or<std::string>(c, "history", s.history);
  get_optional(c, "history_tokens", s.history_tokens);
  get_optional(c, "target_speedup", s.target_speedup);
  get_optional(c, "max_tokens", s.max_tokens);
  get_optional(c, "max_seconds", s.max_seconds);
  s.prompts = get_or<std::string>(c, "prompts", s.prompts);
  // Runs recorded before the evaluation flags were grouped kept a few of them at the top level.
  from_json(c.contains("eval") && c["eval"].is_object() ? c["eval"] : c, s.eval);
  const nlohmann::json llm = get_or(c, "llm", nlohmann::json::object());
  llm::LlmFlags& f = s.llm;
  auto text = [](const nlohmann::json& j, const char* key) { return get_or<std::string>(j, key, ""); };
  if (!f.provider && !text(llm, "provider").empty()) f.provider = text(llm, "provider");
  if (!f.model && !text(llm, "model").empty()) f.model = text(llm, "model");
  if (!f.base_url && !text(llm, "base_url").empty()) f.base_url = text(llm, "base_url");
  const nlohmann::json smp = get_or(llm, "sampling", nlohmann::json::object());
  if (!f.temperature) get_optional(smp, "temperature", f.temperature);
  if (!f.top_p) get_optional(smp, "top_p", f.top_p);
  if (!f.max_tokens) get_optional(smp, "max_tokens", f.max_tokens);
  if (!f.reasoning_effort) get_optional(smp, "reasoning_effort", f.reasoning_effort);
  return get_or<std::string>(c, "problem", problem);
}

loop::ProblemRunOptions problem_run_options(const SolveSettings& s) {
  loop::ProblemRunOptions o;
  o.format = prompt::answer_format_from_string(s.format);
  o.history = {loop::history_policy_from_string(s.history), s.history_tokens};
  o.limits = {s.turns, s.target_speedup, s.max_tokens, s.max_seconds};
  return o;
}

}  // namespace kagent::cli
