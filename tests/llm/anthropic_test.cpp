// The Anthropic client against a real loopback server: typed stream events, thinking blocks,
// usage, headers, non-streamed answers, overload and error events.
#include <doctest/doctest.h>

#include "llm_server_util.h"

using namespace kagent::llm;
using namespace kagent::testing;

TEST_CASE("anthropic: streamed answer with thinking, usage and the request as sent") {
  FakeLlmServer server;
  server.push({.text = "Hi from Claude.", .reasoning = "Greet them back."});
  auto cfg = server_config(server, "anthropic");
  cfg.sampling.reasoning_effort = "low";
  cfg.sampling.temperature = 1.0;
  auto client = make_client(cfg);
  Collected got;
  auto r = client->chat(hello("System text."), got.callback());
  CHECK(r.text == "Hi from Claude.");
  CHECK(r.reasoning == "Greet them back.");
  CHECK(got.text == r.text);
  CHECK(got.reasoning == r.reasoning);
  CHECK(r.finish_reason == "end_turn");
  CHECK(r.model == "test-model");
  CHECK(r.usage.prompt_tokens == 10);
  CHECK(r.usage.completion_tokens == 6);
  CHECK(r.usage.total_tokens == 16);

  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].path == "/v1/messages");
  CHECK(seen[0].api_key == "sk-test");
  CHECK(seen[0].anthropic_version == "2023-06-01");
  CHECK(seen[0].authorization.empty());
  const auto& b = seen[0].body;
  CHECK(b["system"] == "System text.");
  CHECK(b["messages"].size() == 1);
  CHECK(b["max_tokens"] == 8192);
  CHECK(b["stream"] == true);
  CHECK(b["thinking"]["type"] == "enabled");
  CHECK(b["thinking"]["budget_tokens"] == 2048);
}

TEST_CASE("anthropic: non-streamed answer") {
  FakeLlmServer server;
  server.push({.text = "Whole.", .reasoning = "Think."});
  auto cfg = server_config(server, "anthropic");
  cfg.stream = false;
  cfg.sampling.max_tokens = 100;
  cfg.sampling.reasoning_effort = "high";  // budget would not fit under max_tokens: thinking is left off
  auto client = make_client(cfg);
  auto r = client->chat(hello());
  CHECK(r.text == "Whole.");
  CHECK(r.reasoning == "Think.");
  CHECK(r.finish_reason == "end_turn");
  CHECK(r.usage.completion_tokens == 2);
  CHECK(server.requests()[0].body["max_tokens"] == 100);
  CHECK_FALSE(server.requests()[0].body.contains("thinking"));
}

TEST_CASE("anthropic: 529 overloaded and an error event mid-stream are retried") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::Overloaded});
  server.push({.behavior = Behavior::MidStreamError});
  server.push({.text = "Finally."});
  auto client = make_client(server_config(server, "anthropic"));
  Collected got;
  auto r = client->chat(hello(), got.callback());
  CHECK(r.text == "Finally.");
  REQUIRE(r.attempts.size() == 3);
  CHECK(r.attempts[0].http_status == 529);
  CHECK(r.attempts[0].outcome == "server_error");
  CHECK(r.attempts[1].outcome == "server_error");
  CHECK(got.text == "Finally.");
  CHECK(got.restarts == 1);  // the 529 streamed nothing; the error event came after a delta
  CHECK(server.request_count() == 3);
}

TEST_CASE("anthropic: cut stream retried; 401 terminal; refusal is a result") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::Cut, .cut_after = 4});
  server.push({.text = "Whole again."});
  server.push({.behavior = Behavior::Unauthorized});
  server.push({.behavior = Behavior::Refusal});
  auto client = make_client(server_config(server, "anthropic"));
  auto r = client->chat(hello());
  CHECK(r.text == "Whole again.");
  REQUIRE(r.attempts.size() == 2);
  CHECK(r.attempts[0].outcome == "stream_cut");
  try {
    client->chat(hello());
    FAIL("401 must throw");
  } catch (const TerminalError& e) {
    CHECK(e.kind() == ErrorKind::Auth);
    CHECK(e.attempts.size() == 1);
  }
  auto refused = client->chat(hello());
  CHECK(refused.finish_reason == "refusal");
  CHECK(refused.text.empty());
}
