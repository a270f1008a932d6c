// Bounded retries with exponential backoff and jitter, Retry-After honoured; every attempt
// logged through a callback and recorded. Only RecoverableError is retried.
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <string>

#include "llm/cancel.h"
#include "llm/llm_types.h"

namespace kagent::llm {

struct RetryPolicy {
  int max_attempts = 4;            // total tries, the first included
  double initial_backoff_s = 1.0;  // wait after the first failure
  double multiplier = 2.0;
  double max_backoff_s = 30.0;
  double jitter = 0.25;            // each wait is scaled by a uniform factor in [1-jitter, 1+jitter]
  double max_retry_after_s = 120;  // a longer Retry-After is capped to this
};

// The wait before attempt `failed_attempt + 1`. Retry-After wins when the server gave one
// (never waiting less than it asked); otherwise initial * multiplier^(n-1), capped, jittered.
double backoff_delay(const RetryPolicy& p, int failed_attempt, std::optional<double> retry_after_s,
                     std::mt19937_64& rng);

// Retry-After header value: delta-seconds ("3", "0.5") or an HTTP-date. nullopt when unparsable.
std::optional<double> parse_retry_after(const std::string& value);

// Forwards stream events across attempts; a new attempt announces itself with a Restart event,
// but only when the failed one had streamed something the consumer must discard.
class RetryStream {
 public:
  explicit RetryStream(const StreamCallback& cb) : cb_(cb) {}
  void begin_attempt() {
    if (dirty_ && cb_) cb_(StreamEvent{StreamEvent::Kind::Restart, {}});
    dirty_ = false;
  }
  void operator()(const StreamEvent& e) {
    dirty_ = true;
    if (cb_) cb_(e);
  }
  explicit operator bool() const { return static_cast<bool>(cb_); }

 private:
  const StreamCallback& cb_;
  bool dirty_ = false;
};

using AttemptLogger = std::function<void(const AttemptRecord&)>;

// Calls `attempt(n)` until it returns or throws a non-recoverable error, or max_attempts ran
// out (the last RecoverableError is rethrown). Sleeps between attempts (cancellable: a cancel
// turns into TerminalError(Cancelled)). Fills response.attempts / error.attempts and latency.
ChatResponse run_with_retries(const RetryPolicy& policy, const CancelToken* cancel, const AttemptLogger& log,
                              const std::function<ChatResponse(int attempt)>& attempt);

// "attempt 2/4 failed: rate limited ...; retrying in 1.0 s" — for stderr loggers.
std::string describe_attempt(const AttemptRecord& a, int max_attempts);

}  // namespace kagent::llm
