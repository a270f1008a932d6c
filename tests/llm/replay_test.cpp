// replay:FILE plays recorded answers in order, streams them, replays recorded errors.
#include <doctest/doctest.h>

#include "llm/llm_client.h"
#include "llm/replay_client.h"
#include "llm_test_util.h"

using namespace kagent::llm;
using kagent::testing::TempDir;

namespace {
LlmConfig replay_config(const std::string& file) {
  LlmConfig c;
  c.provider = "replay:" + file;
  c.retry.initial_backoff_s = 0.001;
  return c;
}
}  // namespace

TEST_CASE("replay: answers in order, streamed, then exhausted") {
  TempDir dir;
  std::string f = dir.write("a.jsonl",
                            "# recorded for a test\n"
                            "{\"text\": \"first answer\", \"reasoning\": \"think one\", \"usage\": "
                            "{\"prompt_tokens\": 5, \"completion_tokens\": 7, \"reasoning_tokens\": 2}}\n"
                            "\n"
                            "{\"text\": \"\", \"finish_reason\": \"length\"}\n");
  auto client = make_client(replay_config(f));
  std::string streamed, reasoning;
  int pieces = 0;
  auto r = client->chat({{{"user", "hi"}}, "", {}}, [&](const StreamEvent& e) {
    if (e.kind == StreamEvent::Kind::Text) streamed += e.text, ++pieces;
    if (e.kind == StreamEvent::Kind::Reasoning) reasoning += e.text;
  });
  CHECK(r.text == "first answer");
  CHECK(streamed == "first answer");
  CHECK(pieces == 2);
  CHECK(reasoning == "think one");
  CHECK(r.reasoning == "think one");
  CHECK(r.finish_reason == "stop");
  CHECK(r.usage.prompt_tokens == 5);
  CHECK(r.usage.total_tokens == 12);
  CHECK(r.usage.reasoning_tokens == 2);
  CHECK(r.attempts.size() == 1);

  auto empty = client->chat({{{"user", "again"}}, "", {}});
  CHECK(empty.text.empty());  // an empty answer is a result
  CHECK(empty.finish_reason == "length");

  try {
    client->chat({{{"user", "more"}}, "", {}});
    FAIL("exhausted");
  } catch (const TerminalError& e) {
    CHECK(e.kind() == ErrorKind::Exhausted);
  }
}

TEST_CASE("replay: recorded errors go through the retry loop") {
  TempDir dir;
  std::string f = dir.write("e.jsonl",
                            "{\"error\": {\"kind\": \"rate_limited\", \"message\": \"slow down\", \"http_status\": 429}}\n"
                            "{\"text\": \"ok after retry\"}\n"
                            "{\"error\": {\"kind\": \"auth\", \"message\": \"bad key\", \"http_status\": 401}}\n");
  auto client = make_client(replay_config(f));
  bool restarted = false;
  std::string text;
  auto r = client->chat({{{"user", "x"}}, "", {}}, [&](const StreamEvent& e) {
    if (e.kind == StreamEvent::Kind::Restart) restarted = true;
    if (e.kind == StreamEvent::Kind::Text) text += e.text;
  });
  CHECK(r.text == "ok after retry");
  REQUIRE(r.attempts.size() == 2);
  CHECK(r.attempts[0].outcome == "rate_limited");
  CHECK(r.attempts[0].http_status == 429);
  CHECK_FALSE(restarted);  // the failed attempt streamed nothing to take back
  CHECK(text == "ok after retry");
  CHECK_THROWS_AS(client->chat({{{"user", "x"}}, "", {}}), TerminalError);
}

TEST_CASE("replay: a bad file is a Config error naming the line") {
  TempDir dir;
  std::string f = dir.write("bad.jsonl", "{\"text\": \"ok\"}\n{\"txt\": 1}\n");
  try {
    make_client(replay_config(f));
    FAIL("bad file");
  } catch (const TerminalError& e) {
    CHECK(e.kind() == ErrorKind::Config);
    CHECK(std::string(e.what()).find("bad.jsonl:2") != std::string::npos);
  }
  CHECK_THROWS_AS(make_client(replay_config(dir.str() + "/missing.jsonl")), TerminalError);
}
