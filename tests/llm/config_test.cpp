// Configuration layering: flags > env > file > defaults, the key rules, and the CLI flags.
#include <doctest/doctest.h>

#include "cli/llm_flags.h"
#include "llm/llm_client.h"
#include "llm/llm_config.h"
#include "llm/llm_error.h"
#include "llm_test_util.h"

using namespace kagent::llm;
using kagent::testing::fake_env;
using kagent::testing::TempDir;

namespace {
LlmFlags parse(std::vector<std::string> args) {
  LlmFlags f;
  CLI::App app;
  kagent::cli::add_llm_flags(app, f);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  app.parse(rev);  // CLI11 takes the vector reversed
  return f;
}
}  // namespace

TEST_CASE("config: defaults") {
  TempDir home;
  auto c = resolve_llm_config(LlmFlags{}, fake_env({{"HOME", home.path()}}));
  CHECK(c.provider == "openai");
  CHECK(c.base_url == "https://api.openai.com/v1");
  CHECK(c.model.empty());
  CHECK(c.stream);
  CHECK(c.config_path.empty());
  CHECK_THROWS_AS(validate_llm_config(c), TerminalError);  // no key for a remote server
}

TEST_CASE("config: flags > env > file > defaults") {
  TempDir dir;
  std::string file = dir.write("kagent/config.json", R"({
    "provider": "anthropic", "model": "file-model", "base_url": "http://file:1",
    "api_key": "file-key", "temperature": 0.1, "max_tokens": 100, "reasoning_effort": "low",
    "max_attempts": 7, "initial_backoff_s": 0.5, "read_timeout_s": 9, "max_in_flight": 3,
    "extra_body": {"seed": 1}})");
  auto env = std::map<std::string, std::string>{{"XDG_CONFIG_HOME", dir.path()}};

  SUBCASE("file only (found through XDG_CONFIG_HOME)") {
    auto c = resolve_llm_config(LlmFlags{}, fake_env(env));
    CHECK(c.config_path == file);
    CHECK(c.provider == "anthropic");
    CHECK(c.model == "file-model");
    CHECK(c.base_url == "http://file:1");
    CHECK(c.api_key == "file-key");
    CHECK(c.sampling.temperature == doctest::Approx(0.1));
    CHECK(c.sampling.max_tokens == 100);
    CHECK(c.sampling.reasoning_effort == "low");
    CHECK(c.retry.max_attempts == 7);
    CHECK(c.retry.initial_backoff_s == doctest::Approx(0.5));
    CHECK(c.transport.read_timeout_s == doctest::Approx(9));
    CHECK(c.max_in_flight == 3);
    CHECK(c.extra_body["seed"] == 1);
  }
  SUBCASE("env beats file") {
    env["KAGENT_MODEL"] = "env-model";
    env["KAGENT_BASE_URL"] = "http://env:2";
    env["ANTHROPIC_API_KEY"] = "anthropic-env-key";
    env["OPENAI_API_KEY"] = "openai-env-key";  // not this provider's variable
    auto c = resolve_llm_config(LlmFlags{}, fake_env(env));
    CHECK(c.model == "env-model");
    CHECK(c.base_url == "http://env:2");
    CHECK(c.api_key == "anthropic-env-key");
    env["KAGENT_API_KEY"] = "kagent-key";
    CHECK(resolve_llm_config(LlmFlags{}, fake_env(env)).api_key == "kagent-key");
    env["KAGENT_PROVIDER"] = "openai";
    env.erase("KAGENT_API_KEY");
    c = resolve_llm_config(LlmFlags{}, fake_env(env));
    CHECK(c.provider == "openai");
    CHECK(c.api_key == "openai-env-key");
  }
  SUBCASE("flags beat env") {
    env["KAGENT_MODEL"] = "env-model";
    env["KAGENT_API_KEY"] = "kagent-key";
    auto f = parse({"--model", "flag-model", "--api-key", "flag-key", "--provider", "openai", "--temperature", "0.7",
                    "--top-p", "0.9", "--max-tokens", "50", "--reasoning-effort", "high", "--no-stream",
                    "--max-attempts", "2", "--backoff", "0.05", "--read-timeout", "3", "--connect-timeout", "1",
                    "--logprobs", "--top-logprobs", "5", "--token-ids", "--max-in-flight", "64"});
    auto c = resolve_llm_config(f, fake_env(env));
    CHECK(c.model == "flag-model");
    CHECK(c.api_key == "flag-key");
    CHECK(c.provider == "openai");
    CHECK(c.base_url == "http://file:1");  // not overridden: still the file's
    CHECK(c.sampling.temperature == doctest::Approx(0.7));
    CHECK(c.sampling.top_p == doctest::Approx(0.9));
    CHECK(c.sampling.max_tokens == 50);
    CHECK(c.sampling.reasoning_effort == "high");
    CHECK_FALSE(c.stream);
    CHECK(c.retry.max_attempts == 2);
    CHECK(c.retry.initial_backoff_s == doctest::Approx(0.05));
    CHECK(c.transport.read_timeout_s == doctest::Approx(3));
    CHECK(c.transport.connect_timeout_s == doctest::Approx(1));
    CHECK(c.sampling.logprobs);
    CHECK(c.sampling.top_logprobs == 5);
    CHECK(c.sampling.return_token_ids);
    CHECK(c.max_in_flight == 64);
  }
  SUBCASE("--config names another file") {
    std::string other = dir.write("other.json", R"({"model": "other-model"})");
    auto c = resolve_llm_config(parse({"--config", other}), fake_env(env));
    CHECK(c.model == "other-model");
    CHECK(c.provider == "openai");
  }
}

TEST_CASE("config: bad files and values are Config errors") {
  TempDir dir;
  auto kind = [&](const std::string& content) {
    std::string f = dir.write("c.json", content);
    try {
      resolve_llm_config(parse({"--config", f}), fake_env({}));
    } catch (const TerminalError& e) {
      return e.kind();
    }
    return ErrorKind::Network;
  };
  CHECK(kind("{not json") == ErrorKind::Config);
  CHECK(kind(R"({"modle": "typo"})") == ErrorKind::Config);
  CHECK(kind(R"({"temperature": "hot"})") == ErrorKind::Config);
  CHECK(kind(R"({"max_attempts": 0})") == ErrorKind::Config);
  CHECK_THROWS_AS(resolve_llm_config(parse({"--config", dir.str() + "/missing.json"}), fake_env({})), TerminalError);
}

TEST_CASE("config: key and model requirements") {
  LlmConfig c;
  c.model = "m";
  c.base_url = "https://api.openai.com/v1";
  try {
    validate_llm_config(c);
    FAIL("no key must fail");
  } catch (const TerminalError& e) {
    CHECK(e.kind() == ErrorKind::MissingKey);
    CHECK(std::string(e.what()).find("OPENAI_API_KEY") != std::string::npos);
  }
  c.base_url = "http://127.0.0.1:8000/v1";  // a local server needs no key
  CHECK_NOTHROW(validate_llm_config(c));
  c.model.clear();
  CHECK_THROWS_AS(validate_llm_config(c), TerminalError);
  c.model = "m";
  c.provider = "gemini";
  CHECK_THROWS_AS(validate_llm_config(c), TerminalError);
  c.provider = "replay:";
  CHECK_THROWS_AS(validate_llm_config(c), TerminalError);
}

TEST_CASE("endpoint URLs with or without /v1") {
  CHECK(endpoint_url("http://h:1", "chat/completions") == "http://h:1/v1/chat/completions");
  CHECK(endpoint_url("http://h:1/v1/", "chat/completions") == "http://h:1/v1/chat/completions");
  CHECK(endpoint_url("https://openrouter.ai/api/v1", "chat/completions") ==
        "https://openrouter.ai/api/v1/chat/completions");
  CHECK(endpoint_url("https://api.anthropic.com", "messages") == "https://api.anthropic.com/v1/messages");
  CHECK(endpoint_url("http://h/custom/chat/completions", "chat/completions") == "http://h/custom/chat/completions");
}
