#include "cli/llm_flags.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/flag_checks.h"

namespace kagent::cli {

namespace {

// Empty for a provider kagent knows, else why not.
std::string provider_problem(const std::string& p) {
  if (p == "openai" || p == "anthropic") return {};
  if (p.rfind("replay:", 0) == 0) return p.size() > 7 ? std::string() : "replay: needs a file, as replay:FILE";
  return fmt::format("'{}' is not one of openai, anthropic, replay:FILE", p);
}

}  // namespace

void add_llm_flags(CLI::App& app, llm::LlmFlags& f) {
  const char* g = "LLM";
  auto str = [&](const char* name, std::optional<std::string>& dst, const char* help) {
    return app.add_option_function<std::string>(name, [&dst](const std::string& v) { dst = v; }, help)->group(g);
  };
  // Numbers are checked at parse time, with a message naming the flag and the value.
  auto num = [&](const char* name, std::optional<double>& dst, const char* help) {
    app.add_option_function<double>(name, [&dst](const double& v) { dst = v; }, help)->group(g)->check(
        number_from(0));
  };
  auto integer = [&](const char* name, std::optional<int>& dst, int least, const char* help) {
    app.add_option_function<int>(name, [&dst](const int& v) { dst = v; }, help)->group(g)->check(
        whole_number(least, std::numeric_limits<int>::max()));
  };
  auto flag = [&](const char* name, std::optional<bool>& dst, bool value, const char* help) {
    app.add_flag_function(name, [&dst, value](std::int64_t) { dst = value; }, help)->group(g);
  };
  str("--config", f.config,
      "JSON config file (default: $XDG_CONFIG_HOME/kagent/config.json, else ~/.config/kagent/config.json, if present)");
  str("--provider,--llm", f.provider, "openai | anthropic | replay:FILE  [env KAGENT_PROVIDER]")
      ->check(CLI::Validator([](std::string& v) { return provider_problem(v); }, ""));
  str("--base-url", f.base_url, "server URL, e.g. http://localhost:8000/v1  [env KAGENT_BASE_URL]");
  str("--api-key", f.api_key, "API key  [env KAGENT_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY]");
  str("--model", f.model, "model name  [env KAGENT_MODEL]");
  num("--temperature", f.temperature, "sampling temperature");
  num("--top-p", f.top_p, "nucleus sampling mass");
  integer("--max-tokens", f.max_tokens, 1, "most tokens to generate (reasoning included)");
  str("--reasoning-effort", f.reasoning_effort, "low | medium | high (Anthropic: thinking budget)")
      ->check(one_of({llm::kReasoningEfforts.begin(), llm::kReasoningEfforts.end()}));
  flag("--logprobs", f.logprobs, true, "ask for per-token logprobs (OpenAI-compatible servers)");
  integer("--top-logprobs", f.top_logprobs, 0, "alternatives per token with --logprobs");
  flag("--token-ids", f.return_token_ids, true, "ask for completion token ids (vLLM return_token_ids)");
  flag("--no-stream", f.stream, false, "one JSON answer instead of a stream");
  num("--connect-timeout", f.connect_timeout_s, "seconds to establish a connection");
  num("--read-timeout", f.read_timeout_s, "seconds of silence before an attempt is abandoned");
  num("--total-timeout", f.total_timeout_s, "seconds an attempt may take in all (0: no limit)");
  integer("--max-attempts", f.max_attempts, 1, "tries per request, the first included");
  num("--backoff", f.initial_backoff_s, "first retry wait in seconds (doubles each retry, with jitter)");
  integer("--max-in-flight", f.max_in_flight, 1, "concurrent requests when sending many");
}

}  // namespace kagent::cli
