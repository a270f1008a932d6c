#include "llm/llm_error.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kagent::llm {

const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::RateLimited: return "rate_limited";
    case ErrorKind::ServerError: return "server_error";
    case ErrorKind::ConnectFailed: return "connect_failed";
    case ErrorKind::ConnectTimeout: return "connect_timeout";
    case ErrorKind::ReadTimeout: return "read_timeout";
    case ErrorKind::StreamCut: return "stream_cut";
    case ErrorKind::MalformedResponse: return "malformed_response";
    case ErrorKind::Network: return "network";
    case ErrorKind::MissingKey: return "missing_key";
    case ErrorKind::Auth: return "auth";
    case ErrorKind::NotFound: return "not_found";
    case ErrorKind::ContextTooLong: return "context_too_long";
    case ErrorKind::BadRequest: return "bad_request";
    case ErrorKind::Config: return "config";
    case ErrorKind::Cancelled: return "cancelled";
    case ErrorKind::Exhausted: return "exhausted";
  }
  return "unknown";
}

std::optional<ErrorKind> kind_from_name(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(ErrorKind::Exhausted); ++i)
    if (name == kind_name(static_cast<ErrorKind>(i))) return static_cast<ErrorKind>(i);
  return std::nullopt;
}

bool is_recoverable(ErrorKind k) {
  switch (k) {
    case ErrorKind::RateLimited:
    case ErrorKind::ServerError:
    case ErrorKind::ConnectFailed:
    case ErrorKind::ConnectTimeout:
    case ErrorKind::ReadTimeout:
    case ErrorKind::StreamCut:
    case ErrorKind::MalformedResponse:
    case ErrorKind::Network:
      return true;
    default:
      return false;
  }
}

void throw_error(ErrorKind kind, std::string message, int http_status) {
  if (is_recoverable(kind)) throw RecoverableError(kind, std::move(message), http_status);
  throw TerminalError(kind, std::move(message), http_status);
}

namespace {

// The server's own explanation: OpenAI {"error":{"message"}}, Anthropic {"error":{"type","message"}},
// vLLM {"message"} or {"detail"}; else the raw body, shortened.
std::string server_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"];
      if (e.is_string()) return e;
    }
    for (const char* k : {"message", "detail"})
      if (j.contains(k) && j[k].is_string()) return j[k];
  }
  std::string s = body.substr(0, 200);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

bool contains_ci(std::string hay, std::string needle) {
  auto lower = [](std::string& s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  };
  lower(hay);
  lower(needle);
  return hay.find(needle) != std::string::npos;
}

}  // namespace

void throw_http_error(int status, const std::string& body, std::optional<double> retry_after_s,
                      const std::string& what) {
  std::string msg = server_message(body);
  std::string detail = msg.empty() ? "" : ": " + msg;
  if (status == 429)
    throw RecoverableError(ErrorKind::RateLimited, fmt::format("rate limited (HTTP 429) by {}{}", what, detail),
                           status, retry_after_s);
  if (status >= 500 || status == 408)
    throw RecoverableError(ErrorKind::ServerError, fmt::format("server error (HTTP {}) from {}{}", status, what, detail),
                           status, retry_after_s);
  if (status == 401 || status == 403)
    throw TerminalError(ErrorKind::Auth,
                        fmt::format("API key rejected (HTTP {}) by {}; check --api-key / KAGENT_API_KEY{}",
                                    status, what, detail),
                        status);
  bool too_long = contains_ci(body, "context_length") || contains_ci(body, "context length") ||
                  contains_ci(body, "too long") || contains_ci(body, "maximum context") ||
                  contains_ci(body, "too many tokens");
  if (too_long)
    throw TerminalError(ErrorKind::ContextTooLong,
                        fmt::format("prompt too long for the model's context (HTTP {}){}", status, detail), status);
  if (status == 404 || contains_ci(body, "model_not_found") ||
      (contains_ci(body, "model") && contains_ci(body, "not exist")))
    throw TerminalError(ErrorKind::NotFound,
                        fmt::format("unknown model or endpoint (HTTP {}) at {}{}", status, what, detail), status);
  throw TerminalError(ErrorKind::BadRequest, fmt::format("request rejected (HTTP {}) by {}{}", status, what, detail),
                      status);
}

}  // namespace kagent::llm
