// Faults against a real loopback server: 429 + Retry-After, 5xx, 401/404/400, malformed JSON,
// cut streams, hangs (read timeout), refused and timed-out connections, cancellation and
// Ctrl-C. Asserts the number of attempts and the waits between them.
#include <doctest/doctest.h>

#include <csignal>
#include <thread>

#include <fmt/format.h>

#include "llm/request_pool.h"
#include "llm_server_util.h"

using namespace kagent::llm;
using namespace kagent::testing;

namespace {

template <class E = LlmError>
E expect_error(LlmClient& c, ChatRequest req = hello()) {
  try {
    c.chat(req);
  } catch (const E& e) {
    return e;
  }
  FAIL("expected an error");
  throw;  // unreachable
}

// Gaps between the requests the server saw.
std::vector<double> gaps(const FakeLlmServer& s) {
  auto seen = s.requests();
  std::vector<double> g;
  for (size_t i = 1; i < seen.size(); ++i) g.push_back(seen[i].at_s - seen[i - 1].at_s);
  return g;
}

}  // namespace

TEST_CASE("429 with Retry-After in seconds: waits at least that long, then succeeds") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::RateLimit, .retry_after = "1"});
  server.push({.text = "after the wait"});
  auto client = make_client(server_config(server));
  auto r = client->chat(hello());
  CHECK(r.text == "after the wait");
  REQUIRE(r.attempts.size() == 2);
  CHECK(r.attempts[0].http_status == 429);
  CHECK(r.attempts[0].outcome == "rate_limited");
  CHECK(r.attempts[0].wait_s >= 1.0);
  CHECK(r.attempts[0].wait_s <= 1.25);
  auto g = gaps(server);
  REQUIRE(g.size() == 1);
  CHECK(g[0] >= 1.0);
  CHECK(g[0] < 1.6);
}

TEST_CASE("429 with retry-after-ms: honoured in place of the backoff") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::RateLimit, .retry_after = "30", .retry_after_ms = "150"});
  server.push({.behavior = Behavior::RateLimit});  // no header: exponential backoff
  server.push({.text = "ok"});
  auto cfg = server_config(server);
  cfg.retry.initial_backoff_s = 0.05;
  auto client = make_client(cfg);
  auto r = client->chat(hello());
  REQUIRE(r.attempts.size() == 3);
  CHECK(r.attempts[0].wait_s >= 0.15);  // the precise header wins over the coarse one
  CHECK(r.attempts[0].wait_s < 0.2);
  CHECK(r.attempts[1].wait_s >= 0.1 * 0.75);  // 2nd failure: initial * 2, jittered
  CHECK(r.attempts[1].wait_s <= 0.1 * 1.25);
  auto g = gaps(server);
  CHECK(g[0] >= 0.15);
  CHECK(g[1] >= 0.075);
}

TEST_CASE("500s: exponential backoff with jitter, then success; or give up after max attempts") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::ServerError});
  server.push({.behavior = Behavior::ServerError});
  server.push({.text = "third time lucky"});
  auto cfg = server_config(server);
  cfg.retry.initial_backoff_s = 0.05;
  auto client = make_client(cfg);
  std::vector<AttemptRecord> logged;
  ClientHooks hooks;
  hooks.on_attempt = [&](const AttemptRecord& a) { logged.push_back(a); };
  auto logging_client = make_client(cfg, hooks);
  auto r = logging_client->chat(hello());
  CHECK(r.text == "third time lucky");
  REQUIRE(r.attempts.size() == 3);
  CHECK(r.attempts[0].http_status == 500);
  CHECK(r.attempts[0].wait_s >= 0.0375);
  CHECK(r.attempts[0].wait_s <= 0.0625);
  CHECK(r.attempts[1].wait_s >= 0.075);
  CHECK(r.attempts[1].wait_s <= 0.125);
  CHECK(r.attempts[2].outcome == "ok");
  REQUIRE(logged.size() == 2);  // the logger sees each failed attempt
  CHECK(logged[1].number == 2);
  auto g = gaps(server);
  CHECK(g[0] >= 0.0375);
  CHECK(g[1] >= 0.075);

  server.set_default({.behavior = Behavior::ServerError});
  size_t before = server.request_count();
  auto e = expect_error<RecoverableError>(*client);
  CHECK(e.kind() == ErrorKind::ServerError);
  CHECK(e.http_status() == 500);
  CHECK(e.attempts.size() == 3);
  CHECK(server.request_count() - before == 3);
}

TEST_CASE("401, 404 and context-too-long fail at once with a clear message") {
  FakeLlmServer server;
  auto client = make_client(server_config(server));

  server.push({.behavior = Behavior::Unauthorized});
  auto auth = expect_error<TerminalError>(*client);
  CHECK(auth.kind() == ErrorKind::Auth);
  CHECK(auth.http_status() == 401);
  CHECK(std::string(auth.what()).find("API key") != std::string::npos);
  CHECK(std::string(auth.what()).find("Incorrect API key provided") != std::string::npos);
  CHECK(auth.attempts.size() == 1);

  server.push({.behavior = Behavior::NotFound});
  auto nf = expect_error<TerminalError>(*client);
  CHECK(nf.kind() == ErrorKind::NotFound);
  CHECK(std::string(nf.what()).find("unknown model") != std::string::npos);
  CHECK(std::string(nf.what()).find("test-model") != std::string::npos);

  server.push({.behavior = Behavior::ContextTooLong});
  auto ctx = expect_error<TerminalError>(*client);
  CHECK(ctx.kind() == ErrorKind::ContextTooLong);
  CHECK(std::string(ctx.what()).find("context") != std::string::npos);
  CHECK(server.request_count() == 3);  // one request each: no retries
}

TEST_CASE("malformed JSON: retried, whole or streamed; persistent garbage gives up") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::Malformed});
  server.push({.text = "clean"});
  auto cfg = server_config(server);
  cfg.stream = false;
  auto r = make_client(cfg)->chat(hello());
  CHECK(r.text == "clean");
  REQUIRE(r.attempts.size() == 2);
  CHECK(r.attempts[0].outcome == "malformed_response");

  server.set_default({.behavior = Behavior::Malformed});
  auto streaming = make_client(server_config(server));
  auto e = expect_error<RecoverableError>(*streaming);
  CHECK(e.kind() == ErrorKind::MalformedResponse);
  CHECK(e.attempts.size() == 3);
}

TEST_CASE("a stream cut mid-answer (dropped connection or missing [DONE]) is retried from the start") {
  FakeLlmServer server;
  server.push({.behavior = Behavior::Cut, .text = "the full answer text here", .cut_after = 3});
  server.push({.behavior = Behavior::CutClean, .text = "the full answer text here", .cut_after = 4});
  server.push({.behavior = Behavior::MidStreamError});
  server.push({.text = "the full answer text here"});
  auto cfg = server_config(server);
  cfg.retry.max_attempts = 4;
  auto client = make_client(cfg);
  Collected got;
  auto r = client->chat(hello(), got.callback());
  CHECK(r.text == "the full answer text here");
  REQUIRE(r.attempts.size() == 4);
  CHECK(r.attempts[0].outcome == "stream_cut");
  CHECK(r.attempts[1].outcome == "stream_cut");
  CHECK(r.attempts[2].outcome == "server_error");
  CHECK(got.restarts == 3);
  CHECK(got.text == r.text);  // after the restart marker, the stream is exactly the answer
}

TEST_CASE("a hanging server hits the read timeout on every attempt") {
  FakeLlmServer server;
  server.set_default({.behavior = Behavior::Hang});
  auto cfg = server_config(server);
  cfg.transport.read_timeout_s = 0.3;
  cfg.retry.max_attempts = 2;
  auto client = make_client(cfg);
  auto t0 = std::chrono::steady_clock::now();
  auto e = expect_error<RecoverableError>(*client);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(e.kind() == ErrorKind::ReadTimeout);
  REQUIRE(e.attempts.size() == 2);
  CHECK(e.attempts[0].duration_s >= 0.3);
  CHECK(e.attempts[0].duration_s < 0.6);
  CHECK(took < 1.5);
  CHECK(server.request_count() == 2);
}

TEST_CASE("a total timeout bounds a stream that trickles") {
  FakeLlmServer server;
  server.set_default({.behavior = Behavior::Slow, .text = "a b c d e f g h", .chunk_delay_ms = 50});
  auto cfg = server_config(server);
  cfg.transport.total_timeout_s = 0.2;
  cfg.retry.max_attempts = 1;
  auto e = expect_error<RecoverableError>(*make_client(cfg));
  CHECK(e.kind() == ErrorKind::ReadTimeout);
  CHECK(std::string(e.what()).find("total timeout") != std::string::npos);
}

TEST_CASE("refused connections are retried, then reported as unreachable") {
  LlmConfig cfg;
  cfg.base_url = fmt::format("http://127.0.0.1:{}", closed_port());
  cfg.model = "m";
  cfg.retry.max_attempts = 3;
  cfg.retry.initial_backoff_s = 0.01;
  auto e = expect_error<RecoverableError>(*make_client(cfg));
  CHECK(e.kind() == ErrorKind::ConnectFailed);
  CHECK(e.attempts.size() == 3);
  CHECK(std::string(e.what()).find("cannot connect") != std::string::npos);
}

TEST_CASE("a connect timeout: a listener whose accept queue is full never completes the handshake") {
  // Linux drops SYNs for a listener with a full accept queue, so connect() hangs.
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(lfd, 0) == 0);
  socklen_t len = sizeof a;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {  // fill the queue; later ones hang in SYN-SENT, harmlessly
    int f = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(f, reinterpret_cast<sockaddr*>(&a), sizeof a);
    fillers.push_back(f);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  LlmConfig cfg;
  cfg.base_url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  cfg.model = "m";
  cfg.transport.connect_timeout_s = 0.2;
  cfg.retry.max_attempts = 2;
  cfg.retry.initial_backoff_s = 0.01;
  auto t0 = std::chrono::steady_clock::now();
  auto e = expect_error<RecoverableError>(*make_client(cfg));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(e.kind() == ErrorKind::ConnectTimeout);
  CHECK(e.attempts.size() == 2);
  CHECK(took >= 0.4);
  CHECK(took < 1.5);
  for (int f : fillers) close(f);
  close(lfd);
}

TEST_CASE("cancellation aborts a transfer in progress promptly") {
  FakeLlmServer server;
  server.set_default({.behavior = Behavior::Hang});
  CancelToken cancel;
  ClientHooks hooks;
  hooks.cancel = &cancel;
  auto cfg = server_config(server);
  cfg.transport.read_timeout_s = 30;
  auto client = make_client(cfg, hooks);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.cancel();
  });
  auto t0 = std::chrono::steady_clock::now();
  auto e = expect_error<TerminalError>(*client);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.join();
  CHECK(e.kind() == ErrorKind::Cancelled);
  CHECK(took < 0.6);
}

TEST_CASE("SIGTERM stops as Ctrl-C does, and only a signal cancels the signal-only token") {
  CancelToken cancel, signalled;
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);  // doctest's own, or the default
  {
    ScopedSignalCancel guard(cancel, &signalled);
    cancel.cancel();  // the run's own cancellation (a model failure ending it)
    CHECK_FALSE(signalled.cancelled());
    CHECK_FALSE(guard.interrupted());
    kill(getpid(), SIGTERM);  // handled: this test process lives on
    CHECK(guard.interrupted());
    CHECK(signalled.cancelled());
  }
  // The guard gone, the handler is the earlier one again.
  struct sigaction now {};
  sigaction(SIGTERM, nullptr, &now);
  CHECK((now.sa_handler == before.sa_handler));
}

TEST_CASE("Ctrl-C during a batch: finished answers are kept, running ones abort, the rest never start") {
  FakeLlmServer server(32);
  for (int i = 0; i < 3; ++i) server.push({.text = "quick"});
  server.set_default({.behavior = Behavior::Hang});
  CancelToken cancel;
  ScopedSignalCancel guard(cancel);
  ClientHooks hooks;
  hooks.cancel = &cancel;
  auto cfg = server_config(server);
  cfg.transport.read_timeout_s = 30;
  auto client = make_client(cfg, hooks);
  RequestPool pool(*client, 6, &cancel);
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  auto t0 = std::chrono::steady_clock::now();
  auto out = pool.run(std::vector<ChatRequest>(10, hello()));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  interrupter.join();
  CHECK(guard.interrupted());
  CHECK(cancel.cancelled());
  CHECK(took < 1.5);
  int ok = 0, cancelled = 0;
  for (const auto& o : out) {
    if (o.ok()) {
      ++ok;
      CHECK(o.response->text == "quick");
    } else if (o.error_kind == ErrorKind::Cancelled) {
      ++cancelled;
    }
  }
  CHECK(ok == 3);
  CHECK(cancelled == 7);
}
