// The real `kagent llm` binary against the loopback server and a replay file: streamed output,
// reasoning apart, usage and latency, and one clear line + a distinct status for each failure.
#include <doctest/doctest.h>

#include "kagent_process.h"
#include "llm_server_util.h"
#include "llm_test_util.h"

using namespace kagent::testing;

namespace {

// Runs kagent with exactly `env` as its environment (so the developer's keys and config do not
// leak in), in a folder of its own. sigint_after_ms > 0 sends SIGINT after that long.
KagentRun run_kagent(const std::vector<std::string>& args, const std::vector<std::string>& env,
                     int sigint_after_ms = 0) {
  TempDir dir;
  return kagent::testing::run_kagent(args, env, dir.str(), sigint_after_ms);
}

}  // namespace

TEST_CASE("kagent llm: replay file, no network") {
  TempDir dir;
  std::string f = dir.write("answers.jsonl",
                            "{\"text\": \"Use shared memory tiles.\", \"reasoning\": \"Think about reuse.\", "
                            "\"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 9, \"reasoning_tokens\": 4}}\n");
  auto r = run_kagent({"llm", "--provider", "replay:" + f, "How do I speed up a GEMM?"}, {});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "Use shared memory tiles.\n");  // only the answer on stdout
  CHECK(has(r.err, "[reasoning]"));
  CHECK(has(r.err, "Think about reuse."));
  CHECK(has(r.err, "prompt 5, completion 9 (reasoning 4), total 14"));
  CHECK(has(r.err, "latency"));

  auto again = run_kagent({"llm", "--provider", "replay:" + f, "--json", "q"}, {});
  CHECK(again.status == 0);
  auto j = nlohmann::json::parse(again.out);
  CHECK(j["text"] == "Use shared memory tiles.");
  CHECK(j["usage"]["total_tokens"] == 14);
  CHECK(j["attempts"].size() == 1);
}

TEST_CASE("kagent llm: the local server, OpenAI and Anthropic, configured by flags or env") {
  FakeLlmServer server;
  server.push({.text = "Streamed reply.", .reasoning = "Some thought."});
  auto r = run_kagent({"llm", "--base-url", server.base_url() + "/v1", "--model", "m1", "--system", "sys", "hi"}, {});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "Streamed reply.\n");
  CHECK(has(r.err, "Some thought."));
  CHECK(has(r.err, "tokens: prompt 10"));
  CHECK(has(r.err, "latency"));
  CHECK(has(r.err, "first token"));
  CHECK(server.requests()[0].body["messages"][0]["content"] == "sys");

  server.push({.text = "From env config."});
  auto e = run_kagent({"llm", "hello"}, {"KAGENT_BASE_URL=" + server.base_url(), "KAGENT_MODEL=env-model",
                                     "KAGENT_API_KEY=sk-env"});
  CHECK(e.status == 0);
  CHECK(e.out == "From env config.\n");
  CHECK(server.requests()[1].body["model"] == "env-model");
  CHECK(server.requests()[1].authorization == "Bearer sk-env");

  server.push({.text = "Claude says hi.", .reasoning = "thinking"});
  auto a = run_kagent({"llm", "--provider", "anthropic", "--base-url", server.base_url(), "--model", "claude", "hi"},
                  {"ANTHROPIC_API_KEY=sk-ant"});
  INFO(a.err);
  CHECK(a.status == 0);
  CHECK(a.out == "Claude says hi.\n");
  CHECK(server.requests()[2].api_key == "sk-ant");
}

TEST_CASE("kagent llm: a config file, --config and XDG_CONFIG_HOME") {
  FakeLlmServer server;
  server.set_default({.text = "configured"});
  TempDir dir;
  dir.write("kagent/config.json", "{\"base_url\": \"" + server.base_url() + "\", \"model\": \"file-model\"}");
  auto r = run_kagent({"llm", "q"}, {"XDG_CONFIG_HOME=" + dir.str()});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "configured\n");
  CHECK(server.requests()[0].body["model"] == "file-model");
  auto bad = run_kagent({"llm", "--config", dir.write("bad.json", "{\"modle\": 1}"), "q"}, {});
  CHECK(bad.status == 2);
  CHECK(bad.err_lines() == 1);
  CHECK(has(bad.err, "unknown key \"modle\""));
}

TEST_CASE("kagent llm: one clear line and a distinct status for each failure") {
  SUBCASE("missing key: 3") {
    auto r = run_kagent({"llm", "--model", "gpt-x", "hi"}, {});
    CHECK(r.status == 3);
    CHECK(r.err_lines() == 1);
    CHECK(has(r.err, "kagent llm: error: no API key"));
    CHECK(has(r.err, "OPENAI_API_KEY"));
    CHECK(r.out.empty());
  }
  SUBCASE("unreachable server: 4") {
    std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1";
    auto r = run_kagent({"llm", "--base-url", url, "--model", "m", "--max-attempts", "2", "--backoff", "0.01", "hi"}, {});
    CHECK(r.status == 4);
    CHECK(r.err_lines() == 1);
    CHECK(has(r.err, "cannot connect to"));
    CHECK(has(r.err, "gave up after 2 attempts"));
  }
  FakeLlmServer server;
  std::vector<std::string> base = {"llm", "--base-url", server.base_url(), "--model", "m", "--backoff", "0.01",
                                   "--max-attempts", "2"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  SUBCASE("rejected key: 5") {
    server.push({.behavior = Behavior::Unauthorized});
    auto r = run_kagent(with({"hi"}), {});
    CHECK(r.status == 5);
    CHECK(r.err_lines() == 1);
    CHECK(has(r.err, "API key rejected (HTTP 401)"));
  }
  SUBCASE("unknown model: 6") {
    server.push({.behavior = Behavior::NotFound});
    auto r = run_kagent(with({"hi"}), {});
    CHECK(r.status == 6);
    CHECK(r.err_lines() == 1);
    CHECK(has(r.err, "unknown model"));
  }
  SUBCASE("retries exhausted: 7") {
    server.set_default({.behavior = Behavior::ServerError});
    auto r = run_kagent(with({"hi"}), {});
    CHECK(r.status == 7);
    CHECK(r.err_lines() == 1);
    CHECK(has(r.err, "gave up after 2 attempts"));
    CHECK(server.request_count() == 2);
  }
  SUBCASE("verbose logs each failed attempt") {
    server.push({.behavior = Behavior::RateLimit, .retry_after_ms = "10"});
    server.push({.text = "fine"});
    auto r = run_kagent(with({"-v", "hi"}), {});
    CHECK(r.status == 0);
    CHECK(r.out == "fine\n");
    CHECK(has(r.err, "attempt 1/2 failed"));
    CHECK(has(r.err, "rate limited (HTTP 429)"));
  }
  SUBCASE("Ctrl-C: 130") {
    server.set_default({.behavior = Behavior::Hang});
    auto r = run_kagent(with({"hi"}), {}, 400);
    CHECK(r.status == 130);
    CHECK(r.err_lines() == 1);
    CHECK(has(r.err, "interrupted"));
  }
}

TEST_CASE("kagent llm: bad replay file is 2, an exhausted one is 8") {
  TempDir dir;
  auto missing = run_kagent({"llm", "--provider", "replay:" + dir.str() + "/nope.jsonl", "hi"}, {});
  CHECK(missing.status == 2);
  CHECK(missing.err_lines() == 1);
  auto empty = run_kagent({"llm", "--provider", "replay:" + dir.write("empty.jsonl", ""), "hi"}, {});
  CHECK(empty.status == 8);
  CHECK(empty.err_lines() == 1);
  CHECK(has(empty.err, "has no more answers"));
}

TEST_CASE("kagent llm: the shipped replay file, whose answers are tied to turns, answers in file order") {
  const std::string shipped = std::string(KAGENT_SOURCE_DIR) + "/examples/elementwise_gelu.replay.jsonl";
  auto r = run_kagent({"llm", "--provider", "replay:" + shipped, "hi"}, {});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(has(r.out, "Here is a first version"));
}

TEST_CASE("kagent llm: a prompt from stdin is sent without the newline that ends it") {
  FakeLlmServer server;
  server.set_default({.text = "ok"});
  TempDir dir;
  auto r = kagent::testing::run_kagent({"llm", "--base-url", server.base_url(), "--model", "m", "-"}, {}, dir.str(), 0,
                                       {.input = "line one\nline two\n"});
  INFO(r.err);
  CHECK(r.status == 0);
  REQUIRE(server.requests().size() == 1);
  CHECK(server.requests()[0].body["messages"].back()["content"] == "line one\nline two");
}

TEST_CASE("kagent llm: a reasoning effort kagent does not know is refused, from a flag or a config file") {
  TempDir dir;
  auto flag = run_kagent({"llm", "--model", "m", "--reasoning-effort", "extreme", "hi"}, {});
  CHECK(flag.status == 2);
  CHECK(flag.err == "kagent llm: error: --reasoning-effort: 'extreme' is not one of low, medium, high\n");
  auto file = run_kagent({"llm", "--config", dir.write("c.json", "{\"reasoning_effort\": \"extreme\"}"), "hi"}, {});
  CHECK(file.status == 2);
  CHECK(file.err_lines() == 1);
  CHECK(has(file.err, "\"reasoning_effort\" is \"extreme\", not low, medium or high"));
}
