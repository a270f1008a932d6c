// The OpenAI-compatible client against a real loopback server: streaming, reasoning in its
// three shapes, usage, logprobs/token ids, non-streamed answers, empty and refused answers,
// slow streams, and many requests in flight.
#include <doctest/doctest.h>

#include "llm/request_pool.h"
#include "llm_server_util.h"

using namespace kagent::llm;
using namespace kagent::testing;

TEST_CASE("openai: streamed answer with reasoning_content, usage and the request as sent") {
  FakeLlmServer server;
  server.push({.text = "Hello there, kernel writer.", .reasoning = "The user wants a greeting."});
  auto cfg = server_config(server);
  cfg.sampling.temperature = 0.3;
  cfg.sampling.top_p = 0.95;
  cfg.sampling.max_tokens = 256;
  cfg.sampling.reasoning_effort = "high";
  auto client = make_client(cfg);
  Collected got;
  auto r = client->chat(hello("Be brief."), got.callback());

  CHECK(r.text == "Hello there, kernel writer.");
  CHECK(r.reasoning == "The user wants a greeting.");
  CHECK(got.text == r.text);
  CHECK(got.reasoning == r.reasoning);
  CHECK(got.text_events == 4);
  CHECK(r.finish_reason == "stop");
  CHECK(r.model == "test-model");
  CHECK(r.usage.prompt_tokens == 10);
  CHECK(r.usage.completion_tokens == 9);
  CHECK(r.usage.reasoning_tokens == 5);
  CHECK(r.usage.total_tokens == 19);
  CHECK(r.attempts.size() == 1);
  CHECK(r.first_token_s >= 0);
  CHECK(r.latency_s >= r.first_token_s);

  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].path == "/v1/chat/completions");
  CHECK(seen[0].authorization == "Bearer sk-test");
  const auto& b = seen[0].body;
  CHECK(b["model"] == "test-model");
  CHECK(b["stream"] == true);
  CHECK(b["stream_options"]["include_usage"] == true);
  CHECK(b["messages"][0]["role"] == "system");
  CHECK(b["messages"][0]["content"] == "Be brief.");
  CHECK(b["messages"][1]["role"] == "user");
  CHECK(b["temperature"] == doctest::Approx(0.3));
  CHECK(b["top_p"] == doctest::Approx(0.95));
  CHECK(b["max_tokens"] == 256);
  CHECK(b["reasoning_effort"] == "high");
  CHECK_FALSE(b.contains("logprobs"));
}

TEST_CASE("openai: the 'reasoning' field and <think> tags are both split out") {
  FakeLlmServer server;
  server.push({.text = "Answer A.", .reasoning = "Field reasoning.", .style = ReasoningStyle::Reasoning});
  server.push({.text = "Answer B.", .reasoning = "Tagged reasoning here.", .style = ReasoningStyle::ThinkTags});
  auto client = make_client(server_config(server));
  auto a = client->chat(hello());
  CHECK(a.text == "Answer A.");
  CHECK(a.reasoning == "Field reasoning.");
  Collected got;
  auto b = client->chat(hello(), got.callback());
  CHECK(b.text == "Answer B.");
  CHECK(b.reasoning == "Tagged reasoning here.");
  CHECK(got.text == "Answer B.");
  CHECK(got.reasoning == "Tagged reasoning here.");
}

TEST_CASE("openai: per-request sampling, logprobs and token ids pass through") {
  FakeLlmServer server;
  server.push({.text = "one two three"});
  auto client = make_client(server_config(server));
  ChatRequest req = hello();
  Sampling s;
  s.logprobs = true;
  s.top_logprobs = 3;
  s.return_token_ids = true;
  s.temperature = 1.0;
  req.sampling = s;
  auto r = client->chat(req);
  REQUIRE(r.logprobs.size() == 3);
  CHECK(r.logprobs[0]["token"] == "one ");
  CHECK(r.logprobs[0]["logprob"] == doctest::Approx(-0.5));
  CHECK(r.token_ids == std::vector<long>{100, 101, 102});
  auto b = server.requests()[0].body;
  CHECK(b["logprobs"] == true);
  CHECK(b["top_logprobs"] == 3);
  CHECK(b["return_token_ids"] == true);
  CHECK(b["temperature"] == doctest::Approx(1.0));
}

TEST_CASE("openai: non-streamed answers") {
  FakeLlmServer server;
  server.push({.text = "Whole answer.", .reasoning = "Whole reasoning."});
  server.push({.text = "Tagged.", .reasoning = "Thoughts.", .style = ReasoningStyle::ThinkTags});
  auto cfg = server_config(server);
  cfg.stream = false;
  auto client = make_client(cfg);
  Collected got;
  auto r = client->chat(hello(), got.callback());
  CHECK(r.text == "Whole answer.");
  CHECK(r.reasoning == "Whole reasoning.");
  CHECK(got.text == "Whole answer.");  // delivered to the callback in one piece
  CHECK(r.usage.completion_tokens == 4);
  CHECK(r.usage.reasoning_tokens == 2);
  CHECK_FALSE(server.requests()[0].body.contains("stream"));
  auto t = client->chat(hello());
  CHECK(t.text == "Tagged.");
  CHECK(t.reasoning == "Thoughts.");
}

TEST_CASE("openai: an empty answer and a refusal are results, not errors") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::Empty});
  server.push({.behavior = Behavior::Refusal});
  auto client = make_client(server_config(server));
  auto e = client->chat(hello());
  CHECK(e.text.empty());
  CHECK(e.finish_reason == "stop");
  CHECK(e.attempts.size() == 1);
  auto r = client->chat(hello());
  CHECK(r.text.empty());
  CHECK(r.refusal == "I can't help with that.");
}

TEST_CASE("openai: a slow stream arrives piece by piece within the read timeout") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::Slow, .text = "one two three four five six", .chunk_delay_ms = 60});
  auto cfg = server_config(server);
  cfg.transport.read_timeout_s = 0.5;  // longer than any gap, shorter than the whole answer
  auto client = make_client(cfg);
  Collected got;
  auto r = client->chat(hello(), got.callback());
  CHECK(r.text == "one two three four five six");
  REQUIRE(got.text_times.size() == 6);
  CHECK(got.text_times.back() - got.text_times.front() >= 0.25);  // streamed, not buffered
  CHECK(r.latency_s >= 0.4);
  CHECK(r.attempts.size() == 1);
}

TEST_CASE("openai: many requests in flight, bounded by the limit") {
  FakeLlmServer server(32);
  server.set_default({.behavior = Behavior::Slow, .text = "a b c", .chunk_delay_ms = 30});
  auto client = make_client(server_config(server));
  std::vector<ChatRequest> reqs(16, hello());

  RequestPool narrow(*client, 4);
  auto out = narrow.run(reqs);
  for (const auto& o : out) {
    REQUIRE(o.ok());
    CHECK(o.response->text == "a b c");
  }
  CHECK(server.max_in_flight() <= 4);
  CHECK(server.max_in_flight() >= 2);

  FakeLlmServer wide_server(32);
  wide_server.set_default({.behavior = Behavior::Slow, .text = "a b c", .chunk_delay_ms = 30});
  auto wide_client = make_client(server_config(wide_server));
  RequestPool wide(*wide_client, 16);
  auto t0 = std::chrono::steady_clock::now();
  auto out2 = wide.run(reqs);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& o : out2) CHECK(o.ok());
  CHECK(wide_server.max_in_flight() > 4);
  CHECK(wall < 16 * 0.15);  // concurrent, not one after another
}
