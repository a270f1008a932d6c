// LLM failures as two distinct types: a RecoverableError is worth retrying (rate limit,
// 5xx, network trouble, a cut stream, garbage JSON); a TerminalError is not (bad key,
// unknown model, context too long, cancelled). Both carry the attempts made so far.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llm/llm_types.h"

namespace kagent::llm {

enum class ErrorKind {
  // recoverable
  RateLimited,        // 429
  ServerError,        // 5xx, Anthropic 529 overloaded, an error event mid-stream
  ConnectFailed,      // refused, unresolvable host
  ConnectTimeout,
  ReadTimeout,        // no byte for read_timeout_s, or total_timeout_s exceeded
  StreamCut,          // the answer stopped before its end marker
  MalformedResponse,  // not the JSON the protocol promises
  Network,            // any other transport failure
  // terminal
  MissingKey,
  Auth,               // 401 / 403
  NotFound,           // 404, usually an unknown model
  ContextTooLong,
  BadRequest,         // other 4xx
  Config,             // unusable configuration (no model, bad provider, bad replay file)
  Cancelled,          // Ctrl-C
  Exhausted,          // replay file has no more answers
};

const char* kind_name(ErrorKind k);
bool is_recoverable(ErrorKind k);
std::optional<ErrorKind> kind_from_name(const std::string& name);  // inverse of kind_name

class LlmError : public std::runtime_error {
 public:
  LlmError(ErrorKind kind, std::string message, int http_status = 0)
      : std::runtime_error(std::move(message)), kind_(kind), http_status_(http_status) {}
  ErrorKind kind() const { return kind_; }
  int http_status() const { return http_status_; }
  std::vector<AttemptRecord> attempts;  // filled by the retry loop

 private:
  ErrorKind kind_;
  int http_status_;
};

class RecoverableError : public LlmError {
 public:
  RecoverableError(ErrorKind kind, std::string message, int http_status = 0,
                   std::optional<double> retry_after_s = std::nullopt)
      : LlmError(kind, std::move(message), http_status), retry_after_s(retry_after_s) {}
  std::optional<double> retry_after_s;  // server's Retry-After, when it gave one
};

class TerminalError : public LlmError {
 public:
  using LlmError::LlmError;
};

// Classifies an HTTP error answer: status, its body (for the server's own message) and Retry-After.
// Throws the matching RecoverableError or TerminalError. `what` names the endpoint for messages.
[[noreturn]] void throw_http_error(int status, const std::string& body, std::optional<double> retry_after_s,
                                   const std::string& what);

// Throws RecoverableError or TerminalError according to the kind.
[[noreturn]] void throw_error(ErrorKind kind, std::string message, int http_status = 0);

}  // namespace kagent::llm
