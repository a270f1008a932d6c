// LLM configuration shared by every command that talks to a model (`kagent llm`,
// `kagent solve`, ...): the settings struct, the values of the command-line flags
// (cli/llm_flags.h registers them), and the resolver that layers flags > environment >
// config file > defaults.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "llm/http_transport.h"
#include "llm/llm_types.h"
#include "llm/retry_policy.h"

namespace kagent::llm {

struct LlmConfig {
  std::string provider = "openai";  // "openai" | "anthropic" | "replay:FILE"
  std::string base_url;             // resolved: never empty for HTTP providers
  std::string api_key;
  std::string model;
  Sampling sampling;
  bool stream = true;
  TransportOptions transport;
  RetryPolicy retry;
  int max_in_flight = 8;                                // concurrent requests for batch users
  nlohmann::json extra_body = nlohmann::json::object();  // merged into every request body (file only)
  std::string config_path;                              // the config file that was read; empty: none

  bool is_replay() const { return provider.rfind("replay:", 0) == 0; }
  std::string replay_file() const { return is_replay() ? provider.substr(7) : std::string(); }
};

// The reasoning efforts a request may ask for.
inline constexpr std::array<std::string_view, 3> kReasoningEfforts = {"low", "medium", "high"};

// Values given on the command line (cli/llm_flags.h); unset ones fall through to env, file, defaults.
struct LlmFlags {
  std::optional<std::string> config, provider, base_url, api_key, model, reasoning_effort;
  std::optional<double> temperature, top_p, connect_timeout_s, read_timeout_s, total_timeout_s, initial_backoff_s;
  std::optional<int> max_tokens, top_logprobs, max_attempts, max_in_flight;
  std::optional<bool> stream, logprobs, return_token_ids;
};

// Reads an environment variable; nullopt when unset or empty. Injectable for tests.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

// Layers the configuration. Throws TerminalError(Config) for an unreadable or invalid config
// file or a bad value. Does not check the key or model: validate_llm_config does that.
LlmConfig resolve_llm_config(const LlmFlags& flags, const EnvLookup& env = process_env());

// Applies one JSON object of config keys (the config file format) onto cfg. Throws on unknown keys.
void apply_config_json(LlmConfig& cfg, const nlohmann::json& j, const std::string& origin);

// The config file read when --config is not given: $XDG_CONFIG_HOME/kagent/config.json, else
// ~/.config/kagent/config.json; empty when neither exists.
std::string default_config_path(const EnvLookup& env);

// Throws TerminalError(MissingKey) when an HTTP provider needs a key and has none (loopback
// servers need none), TerminalError(Config) for no model or an unknown provider.
void validate_llm_config(const LlmConfig& cfg);

// The provider's default base URL ("https://api.openai.com/v1", "https://api.anthropic.com").
std::string default_base_url(const std::string& provider);

// base_url + the endpoint path, tolerating a base with or without "/v1".
std::string endpoint_url(const std::string& base_url, std::string_view path_after_v1);

}  // namespace kagent::llm
