// A real HTTP server on 127.0.0.1 (ephemeral port) that speaks the OpenAI chat-completions
// and Anthropic messages protocols, scriptable per request: answer normally, stream slowly,
// cut the stream, 429 with Retry-After, 5xx, 401, 404, context too long, malformed JSON, hang.
// Used by the LLM tests and the LLM benchmark.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
}

namespace kagent::testing {

enum class Behavior {
  Normal,          // a complete answer (streamed when the request asks for a stream)
  Slow,            // a complete answer, chunk_delay_ms between stream events
  Cut,             // cut_after events, then the connection drops mid-chunked-body
  CutClean,        // cut_after events, then a clean end of body without the end marker
  RateLimit,       // 429 with Retry-After / retry-after-ms
  ServerError,     // 500
  Overloaded,      // 529 (Anthropic's overloaded)
  Unauthorized,    // 401
  NotFound,        // 404 unknown model
  ContextTooLong,  // 400 context length exceeded
  Malformed,       // 200 with a body that is not JSON (a bad stream event when streaming)
  MidStreamError,  // a few events, then an error event
  Hang,            // never answers (until the server is destroyed)
  Empty,           // a complete answer with empty text
  Refusal,         // OpenAI: a refusal; Anthropic: stop_reason "refusal"
};

enum class ReasoningStyle { ReasoningContent, Reasoning, ThinkTags };

struct Script {
  Behavior behavior = Behavior::Normal;
  std::string text = "Hello from the fake server.";
  std::string reasoning{};  // empty: no reasoning
  ReasoningStyle style = ReasoningStyle::ReasoningContent;
  int chunk_delay_ms = 0;
  int cut_after = 3;
  std::string retry_after{};     // Retry-After header for 429 ("1", an HTTP-date, or empty)
  std::string retry_after_ms{};  // retry-after-ms header for 429
};

struct SeenRequest {
  std::string path;
  nlohmann::json body;
  std::string authorization;  // Authorization header
  std::string api_key;        // x-api-key header
  std::string anthropic_version;
  double at_s = 0;            // arrival, seconds since the server started
};

class FakeLlmServer {
 public:
  // keep_alive_s: how long an idle client connection is kept open (and may delay destruction).
  explicit FakeLlmServer(int threads = 16, int keep_alive_s = 1);
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const;  // "http://127.0.0.1:PORT"

  void push(Script s);            // the next request (FIFO) gets s
  void set_default(Script s);     // when nothing is queued
  std::vector<SeenRequest> requests() const;
  size_t request_count() const;
  int max_in_flight() const;     // most requests being answered at once so far

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace kagent::testing
