// RequestPool over the replay client: everything runs, limits hold, cancellation keeps results.
#include <doctest/doctest.h>

#include <set>
#include <thread>

#include <fmt/format.h>

#include "llm/request_pool.h"
#include "llm_test_util.h"

using namespace kagent::llm;
using kagent::testing::TempDir;

TEST_CASE("pool: all requests answered, outcomes in request order slots") {
  TempDir dir;
  std::string lines;
  for (int i = 0; i < 20; ++i) lines += fmt::format("{{\"text\": \"answer {}\", \"delay_ms\": 5}}\n", i);
  LlmConfig c;
  c.provider = "replay:" + dir.write("p.jsonl", lines);
  auto client = make_client(c);
  RequestPool pool(*client, 4);
  std::vector<ChatRequest> reqs(20, ChatRequest{{{"user", "q"}}, "", {}});
  size_t callbacks = 0;
  auto out = pool.run(reqs, [&](size_t, const PoolOutcome& o) {
    ++callbacks;
    CHECK(o.ok());
  });
  CHECK(callbacks == 20);
  std::set<std::string> texts;
  for (const auto& o : out) {
    REQUIRE(o.ok());
    texts.insert(o.response->text);
  }
  CHECK(texts.size() == 20);
}

TEST_CASE("pool: cancellation keeps finished results and marks the rest cancelled") {
  TempDir dir;
  std::string lines;
  for (int i = 0; i < 10; ++i) lines += "{\"text\": \"slow\", \"delay_ms\": 400}\n";
  LlmConfig c;
  c.provider = "replay:" + dir.write("s.jsonl", lines);
  CancelToken cancel;
  ClientHooks hooks;
  hooks.cancel = &cancel;
  auto client = make_client(c, hooks);
  RequestPool pool(*client, 2, &cancel);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    cancel.cancel();
  });
  auto t0 = std::chrono::steady_clock::now();
  auto out = pool.run(std::vector<ChatRequest>(10, ChatRequest{{{"user", "q"}}, "", {}}));
  canceller.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1500));
  int ok = 0, cancelled = 0;
  for (const auto& o : out) {
    if (o.ok()) ++ok;
    else if (o.error_kind == ErrorKind::Cancelled) ++cancelled;
  }
  CHECK(ok == 2);
  CHECK(cancelled == 8);
}
