#include "llm/llm_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "llm/llm_error.h"

namespace kagent::llm {

namespace fs = std::filesystem;

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

std::string default_config_path(const EnvLookup& env) {
  fs::path p;
  if (auto xdg = env("XDG_CONFIG_HOME"))
    p = fs::path(*xdg) / "kagent" / "config.json";
  else if (auto home = env("HOME"))
    p = fs::path(*home) / ".config" / "kagent" / "config.json";
  std::error_code ec;
  if (!p.empty() && fs::is_regular_file(p, ec)) return p.string();
  return {};
}

namespace {

template <class T>
T get_as(const nlohmann::json& v, const std::string& key, const std::string& origin) {
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw TerminalError(ErrorKind::Config, fmt::format("{}: \"{}\" has the wrong type ({})", origin, key,
                                                       v.type_name()));
  }
}

void check_positive(double v, const char* what) {
  if (!(v >= 0)) throw TerminalError(ErrorKind::Config, fmt::format("{} must be >= 0, got {}", what, v));
}

}  // namespace

void apply_config_json(LlmConfig& c, const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw TerminalError(ErrorKind::Config, origin + ": expected a JSON object");
  for (const auto& [k, v] : j.items()) {
    auto s = [&] { return get_as<std::string>(v, k, origin); };
    auto d = [&] { return get_as<double>(v, k, origin); };
    auto i = [&] { return get_as<int>(v, k, origin); };
    auto b = [&] { return get_as<bool>(v, k, origin); };
    if (k == "provider") c.provider = s();
    else if (k == "base_url") c.base_url = s();
    else if (k == "api_key") c.api_key = s();
    else if (k == "model") c.model = s();
    else if (k == "temperature") c.sampling.temperature = d();
    else if (k == "top_p") c.sampling.top_p = d();
    else if (k == "max_tokens") c.sampling.max_tokens = i();
    else if (k == "reasoning_effort") {
      c.sampling.reasoning_effort = s();
      if (std::find(kReasoningEfforts.begin(), kReasoningEfforts.end(), *c.sampling.reasoning_effort) ==
          kReasoningEfforts.end())
        throw TerminalError(ErrorKind::Config, fmt::format("{}: \"reasoning_effort\" is \"{}\", not low, medium or high",
                                                           origin, *c.sampling.reasoning_effort));
    }
    else if (k == "logprobs") c.sampling.logprobs = b();
    else if (k == "top_logprobs") c.sampling.top_logprobs = i();
    else if (k == "return_token_ids") c.sampling.return_token_ids = b();
    else if (k == "stream") c.stream = b();
    else if (k == "connect_timeout_s") c.transport.connect_timeout_s = d();
    else if (k == "read_timeout_s") c.transport.read_timeout_s = d();
    else if (k == "total_timeout_s") c.transport.total_timeout_s = d();
    else if (k == "max_attempts") c.retry.max_attempts = i();
    else if (k == "initial_backoff_s") c.retry.initial_backoff_s = d();
    else if (k == "max_backoff_s") c.retry.max_backoff_s = d();
    else if (k == "backoff_multiplier") c.retry.multiplier = d();
    else if (k == "backoff_jitter") c.retry.jitter = d();
    else if (k == "max_in_flight") c.max_in_flight = i();
    else if (k == "extra_body") {
      if (!v.is_object()) throw TerminalError(ErrorKind::Config, origin + ": \"extra_body\" must be an object");
      c.extra_body = v;
    } else {
      throw TerminalError(ErrorKind::Config, fmt::format("{}: unknown key \"{}\"", origin, k));
    }
  }
}

std::string default_base_url(const std::string& provider) {
  if (provider == "anthropic") return "https://api.anthropic.com";
  return "https://api.openai.com/v1";
}

std::string endpoint_url(const std::string& base_url, std::string_view path_after_v1) {
  std::string b = base_url;
  while (!b.empty() && b.back() == '/') b.pop_back();
  std::string tail(path_after_v1);
  if (b.size() >= tail.size() && b.compare(b.size() - tail.size(), tail.size(), tail) == 0) return b;
  if (b.size() >= 3 && b.compare(b.size() - 3, 3, "/v1") == 0) return b + "/" + tail;
  return b + "/v1/" + tail;
}

LlmConfig resolve_llm_config(const LlmFlags& f, const EnvLookup& env) {
  LlmConfig c;
  // 1. the config file
  std::string path = f.config ? *f.config : default_config_path(env);
  std::string file_key;
  if (!path.empty()) {
    std::ifstream in(path);
    if (!in) throw TerminalError(ErrorKind::Config, fmt::format("cannot read config file {}", path));
    std::stringstream ss;
    ss << in.rdbuf();
    auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) throw TerminalError(ErrorKind::Config, fmt::format("config file {} is not valid JSON", path));
    apply_config_json(c, j, path);
    c.config_path = path;
    file_key = c.api_key;
  }
  // 2. the environment
  if (auto v = env("KAGENT_PROVIDER")) c.provider = *v;
  if (auto v = env("KAGENT_BASE_URL")) c.base_url = *v;
  if (auto v = env("KAGENT_MODEL")) c.model = *v;
  // 3. flags
  if (f.provider) c.provider = *f.provider;
  if (f.base_url) c.base_url = *f.base_url;
  if (f.model) c.model = *f.model;
  if (f.temperature) c.sampling.temperature = *f.temperature;
  if (f.top_p) c.sampling.top_p = *f.top_p;
  if (f.max_tokens) c.sampling.max_tokens = *f.max_tokens;
  if (f.reasoning_effort) c.sampling.reasoning_effort = *f.reasoning_effort;
  if (f.logprobs) c.sampling.logprobs = *f.logprobs;
  if (f.top_logprobs) c.sampling.top_logprobs = *f.top_logprobs;
  if (f.return_token_ids) c.sampling.return_token_ids = *f.return_token_ids;
  if (f.stream) c.stream = *f.stream;
  if (f.connect_timeout_s) c.transport.connect_timeout_s = *f.connect_timeout_s;
  if (f.read_timeout_s) c.transport.read_timeout_s = *f.read_timeout_s;
  if (f.total_timeout_s) c.transport.total_timeout_s = *f.total_timeout_s;
  if (f.max_attempts) c.retry.max_attempts = *f.max_attempts;
  if (f.initial_backoff_s) c.retry.initial_backoff_s = *f.initial_backoff_s;
  if (f.max_in_flight) c.max_in_flight = *f.max_in_flight;

  // The key depends on the final provider: flag > KAGENT_API_KEY > the provider's own variable > file.
  std::optional<std::string> provider_key;
  if (c.provider == "openai") provider_key = env("OPENAI_API_KEY");
  if (c.provider == "anthropic") provider_key = env("ANTHROPIC_API_KEY");
  if (f.api_key) c.api_key = *f.api_key;
  else if (auto v = env("KAGENT_API_KEY")) c.api_key = *v;
  else if (provider_key) c.api_key = *provider_key;
  else c.api_key = file_key;

  if (c.base_url.empty() && !c.is_replay()) c.base_url = default_base_url(c.provider);

  check_positive(c.transport.connect_timeout_s, "connect timeout");
  check_positive(c.transport.read_timeout_s, "read timeout");
  check_positive(c.transport.total_timeout_s, "total timeout");
  check_positive(c.retry.initial_backoff_s, "backoff");
  if (c.retry.max_attempts < 1) throw TerminalError(ErrorKind::Config, "max attempts must be >= 1");
  if (c.max_in_flight < 1) throw TerminalError(ErrorKind::Config, "max in flight must be >= 1");
  return c;
}

namespace {
bool is_loopback(const std::string& url) {
  auto p = url.find("://");
  std::string host = url.substr(p == std::string::npos ? 0 : p + 3);
  for (const char* h : {"localhost", "127.", "[::1]"})
    if (host.rfind(h, 0) == 0) return true;
  return false;
}
}  // namespace

void validate_llm_config(const LlmConfig& c) {
  if (c.is_replay()) {
    if (c.replay_file().empty()) throw TerminalError(ErrorKind::Config, "provider replay: needs a file, as replay:FILE");
    return;
  }
  if (c.provider != "openai" && c.provider != "anthropic")
    throw TerminalError(ErrorKind::Config,
                        fmt::format("unknown provider \"{}\" (openai, anthropic or replay:FILE)", c.provider));
  if (c.api_key.empty() && !is_loopback(c.base_url))
    throw TerminalError(ErrorKind::MissingKey,
                        fmt::format("no API key for {} at {}: set --api-key, KAGENT_API_KEY or {}", c.provider,
                                    c.base_url, c.provider == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"));
  if (c.model.empty())
    throw TerminalError(ErrorKind::Config, "no model: set --model, KAGENT_MODEL or \"model\" in the config file");
}

}  // namespace kagent::llm
