// Backoff arithmetic, Retry-After parsing, error classification and the retry loop itself.
#include <doctest/doctest.h>

#include <chrono>
#include <ctime>
#include <thread>

#include <curl/curl.h>

#include "llm/llm_error.h"
#include "llm/retry_policy.h"

using namespace kagent::llm;

TEST_CASE("backoff: exponential, capped, jittered within bounds") {
  RetryPolicy p;
  p.initial_backoff_s = 1;
  p.multiplier = 2;
  p.max_backoff_s = 5;
  p.jitter = 0.25;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100; ++i) {
    double d1 = backoff_delay(p, 1, std::nullopt, rng);
    double d3 = backoff_delay(p, 3, std::nullopt, rng);
    double d9 = backoff_delay(p, 9, std::nullopt, rng);
    CHECK(d1 >= 0.75);
    CHECK(d1 <= 1.25);
    CHECK(d3 >= 3.0);
    CHECK(d3 <= 5.0);
    CHECK(d9 <= 5 * 1.25);
  }
  p.jitter = 0;
  CHECK(backoff_delay(p, 2, std::nullopt, rng) == doctest::Approx(2.0));
}

TEST_CASE("backoff: Retry-After is honoured, never undercut, and capped") {
  RetryPolicy p;
  p.initial_backoff_s = 0.01;
  p.max_retry_after_s = 10;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    double d = backoff_delay(p, 1, 2.0, rng);
    CHECK(d >= 2.0);
    CHECK(d <= 2.0 * (1 + p.jitter));
  }
  CHECK(backoff_delay(p, 1, 1000.0, rng) <= 10 * (1 + p.jitter));
}

TEST_CASE("Retry-After: seconds, fractions, HTTP-dates, garbage") {
  CHECK(parse_retry_after("3") == doctest::Approx(3.0));
  CHECK(parse_retry_after(" 0.5\r\n") == doctest::Approx(0.5));
  CHECK_FALSE(parse_retry_after("soon").has_value());
  CHECK_FALSE(parse_retry_after("").has_value());
  char date[64];
  std::time_t t = std::time(nullptr) + 30;
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  auto d = parse_retry_after(date);
  REQUIRE(d.has_value());
  CHECK(*d >= 28);
  CHECK(*d <= 31);
}

TEST_CASE("HTTP errors are classified into recoverable and terminal types") {
  auto kind_of = [](int status, const std::string& body) {
    try {
      throw_http_error(status, body, std::nullopt, "http://x/v1/chat/completions");
    } catch (const RecoverableError& e) {
      CHECK(is_recoverable(e.kind()));
      return e.kind();
    } catch (const TerminalError& e) {
      CHECK_FALSE(is_recoverable(e.kind()));
      return e.kind();
    }
    return ErrorKind::Network;
  };
  CHECK(kind_of(429, "{}") == ErrorKind::RateLimited);
  CHECK(kind_of(500, "oops") == ErrorKind::ServerError);
  CHECK(kind_of(503, "") == ErrorKind::ServerError);
  CHECK(kind_of(529, "") == ErrorKind::ServerError);
  CHECK(kind_of(401, R"({"error":{"message":"Incorrect API key"}})") == ErrorKind::Auth);
  CHECK(kind_of(403, "") == ErrorKind::Auth);
  CHECK(kind_of(404, R"({"error":{"message":"The model `x` does not exist"}})") == ErrorKind::NotFound);
  CHECK(kind_of(400, R"({"error":{"code":"context_length_exceeded"}})") == ErrorKind::ContextTooLong);
  CHECK(kind_of(400, R"({"type":"error","error":{"message":"prompt is too long: 300000 tokens"}})") ==
        ErrorKind::ContextTooLong);
  CHECK(kind_of(400, R"({"error":{"message":"bad temperature"}})") == ErrorKind::BadRequest);
  try {
    throw_http_error(401, R"({"error":{"message":"Incorrect API key provided"}})", std::nullopt, "URL");
  } catch (const TerminalError& e) {
    CHECK(std::string(e.what()).find("Incorrect API key provided") != std::string::npos);
    CHECK(e.http_status() == 401);
  }
}

TEST_CASE("retry loop: retries recoverable errors, records attempts and waits, stops at the limit") {
  RetryPolicy p;
  p.max_attempts = 3;
  p.initial_backoff_s = 0.01;
  p.jitter = 0;
  std::vector<AttemptRecord> logged;
  int calls = 0;
  auto r = run_with_retries(p, nullptr, [&](const AttemptRecord& a) { logged.push_back(a); }, [&](int n) {
    ++calls;
    CHECK(n == calls);
    if (n < 3) throw RecoverableError(ErrorKind::ServerError, "boom", 500);
    ChatResponse ok;
    ok.text = "done";
    return ok;
  });
  CHECK(r.text == "done");
  REQUIRE(r.attempts.size() == 3);
  CHECK(r.attempts[0].outcome == "server_error");
  CHECK(r.attempts[0].wait_s == doctest::Approx(0.01));
  CHECK(r.attempts[1].wait_s == doctest::Approx(0.02));
  CHECK(r.attempts[2].outcome == "ok");
  CHECK(logged.size() == 2);
  CHECK(describe_attempt(logged[0], 3).find("attempt 1/3 failed") == 0);

  calls = 0;
  try {
    run_with_retries(p, nullptr, {}, [&](int) -> ChatResponse {
      ++calls;
      throw RecoverableError(ErrorKind::ReadTimeout, "slow");
    });
    FAIL("should throw");
  } catch (const RecoverableError& e) {
    CHECK(e.kind() == ErrorKind::ReadTimeout);
    CHECK(e.attempts.size() == 3);
    CHECK(e.attempts.back().wait_s == 0);
  }
  CHECK(calls == 3);

  calls = 0;
  CHECK_THROWS_AS(run_with_retries(p, nullptr, {}, [&](int) -> ChatResponse {
                    ++calls;
                    throw TerminalError(ErrorKind::Auth, "bad key", 401);
                  }),
                  TerminalError);
  CHECK(calls == 1);
}

TEST_CASE("retry loop: cancellation during a backoff wait ends it promptly") {
  RetryPolicy p;
  p.max_attempts = 5;
  p.initial_backoff_s = 30;
  CancelToken cancel;
  auto t0 = std::chrono::steady_clock::now();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel.cancel();
  });
  try {
    run_with_retries(p, &cancel, {}, [](int) -> ChatResponse { throw RecoverableError(ErrorKind::ServerError, "x"); });
    FAIL("should throw");
  } catch (const TerminalError& e) {
    CHECK(e.kind() == ErrorKind::Cancelled);
    CHECK(e.attempts.size() == 1);
  }
  canceller.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}
