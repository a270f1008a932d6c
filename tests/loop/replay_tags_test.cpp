// The replay provider hands each sample and turn its own recorded answer (parallel samples,
// resumed runs), and plays untagged answers in order.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "llm/llm_client.h"
#include "temp_dir.h"

using namespace kagent::llm;

namespace {
ChatRequest tagged(int sample, int turn) {
  ChatRequest r;
  r.messages.push_back({"user", "q"});
  r.tag = {{"sample", sample}, {"turn", turn}};
  return r;
}
}  // namespace

TEST_CASE("tagged entries answer only their sample and turn; untagged ones anything, in order") {
  const kagent::testing::TempDir dir("kagent-replay-tags");
  std::string f = dir.write("replay.jsonl",
      "{\"sample\": 1, \"turn\": 0, \"text\": \"s1t0\"}\n"
      "{\"sample\": 0, \"turn\": 1, \"text\": \"s0t1\"}\n"
      "{\"sample\": 0, \"turn\": 0, \"text\": \"s0t0\"}\n"
      "{\"text\": \"any-a\"}\n"
      "{\"text\": \"any-b\"}\n");
  LlmConfig cfg;
  cfg.provider = "replay:" + f;
  cfg.retry.max_attempts = 1;
  auto client = make_client(cfg);
  CHECK(client->chat(tagged(0, 0)).text == "s0t0");
  CHECK(client->chat(tagged(1, 0)).text == "s1t0");
  CHECK(client->chat(tagged(0, 1)).text == "s0t1");
  CHECK(client->chat(tagged(2, 0)).text == "any-a");  // no tagged entry for it
  ChatRequest plain;
  plain.messages.push_back({"user", "q"});
  CHECK(client->chat(plain).text == "any-b");
  try {
    client->chat(tagged(0, 0));
    FAIL("expected the replay to be exhausted");
  } catch (const TerminalError& e) {
    CHECK(e.kind() == ErrorKind::Exhausted);
    CHECK(std::string(e.what()).find("sample 0 turn 1") != std::string::npos);
  }
  std::filesystem::remove(f);
}
