#include "llm/retry_policy.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <curl/curl.h>
#include <fmt/format.h>

#include "llm/llm_error.h"

namespace kagent::llm {

double backoff_delay(const RetryPolicy& p, int failed_attempt, std::optional<double> retry_after_s,
                     std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(1.0 - p.jitter, 1.0 + p.jitter);
  if (retry_after_s) {
    double ra = std::clamp(*retry_after_s, 0.0, p.max_retry_after_s);
    // Jitter only upward, so a crowd of clients that got the same Retry-After spreads out
    // without anyone coming back early.
    return ra * std::max(1.0, u(rng));
  }
  double base = p.initial_backoff_s * std::pow(p.multiplier, std::max(0, failed_attempt - 1));
  return std::min(base, p.max_backoff_s) * u(rng);
}

std::optional<double> parse_retry_after(const std::string& value) {
  std::string v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  double secs = std::strtod(v.c_str(), &end);
  if (end && *end == '\0') return std::max(0.0, secs);
  time_t when = curl_getdate(v.c_str(), nullptr);  // HTTP-date
  if (when < 0) return std::nullopt;
  return std::max(0.0, static_cast<double>(when - std::time(nullptr)));
}

std::string describe_attempt(const AttemptRecord& a, int max_attempts) {
  std::string s = fmt::format("attempt {}/{} failed after {:.2f} s: {}", a.number, max_attempts, a.duration_s,
                              a.message);
  if (a.wait_s > 0) s += fmt::format("; retrying in {:.2f} s", a.wait_s);
  return s;
}

ChatResponse run_with_retries(const RetryPolicy& policy, const CancelToken* cancel, const AttemptLogger& log,
                              const std::function<ChatResponse(int attempt)>& attempt) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const auto t0 = clock::now();
  std::random_device rd;
  std::mt19937_64 rng(rd());
  std::vector<AttemptRecord> records;
  const int max_attempts = std::max(1, policy.max_attempts);
  const CancelToken never;

  for (int n = 1;; ++n) {
    AttemptRecord rec;
    rec.number = n;
    rec.start_s = since(t0);
    try {
      if (cancel && cancel->cancelled()) throw TerminalError(ErrorKind::Cancelled, "cancelled");
      ChatResponse r = attempt(n);
      rec.duration_s = since(t0) - rec.start_s;
      rec.outcome = "ok";
      rec.http_status = 200;
      records.push_back(rec);
      r.attempts = std::move(records);
      r.latency_s = since(t0);
      return r;
    } catch (RecoverableError& e) {
      rec.duration_s = since(t0) - rec.start_s;
      rec.http_status = e.http_status();
      rec.outcome = kind_name(e.kind());
      rec.message = e.what();
      if (n >= max_attempts) {
        records.push_back(rec);
        if (log) log(rec);
        e.attempts = std::move(records);
        throw;
      }
      rec.wait_s = backoff_delay(policy, n, e.retry_after_s, rng);
      records.push_back(rec);
      if (log) log(rec);
      if (!(cancel ? *cancel : never).sleep_for(std::chrono::duration<double>(rec.wait_s))) {
        TerminalError c(ErrorKind::Cancelled, "cancelled while waiting to retry");
        c.attempts = std::move(records);
        throw c;
      }
    } catch (TerminalError& e) {
      rec.duration_s = since(t0) - rec.start_s;
      rec.http_status = e.http_status();
      rec.outcome = kind_name(e.kind());
      rec.message = e.what();
      records.push_back(rec);
      if (log) log(rec);
      e.attempts = std::move(records);
      throw;
    }
  }
}

}  // namespace kagent::llm
