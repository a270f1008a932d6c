// The data that crosses the LLM client interface: requests, streamed deltas, responses.
// Plain structs with JSON out, so a run log can record exactly what was asked and answered.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent::llm {

struct ChatMessage {
  std::string role;     // "user" or "assistant" ("system" goes in ChatRequest::system)
  std::string content;
};

// Sampling settings; an unset field is not sent, so the server's default applies.
struct Sampling {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int> max_tokens;
  std::optional<std::string> reasoning_effort;  // "low" | "medium" | "high" (provider maps it)
  bool logprobs = false;                        // OpenAI-compatible only: per-token logprobs
  std::optional<int> top_logprobs;
  bool return_token_ids = false;                // vLLM/SGLang extension: completion token ids, for RL
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  std::string system;                 // empty: none
  std::optional<Sampling> sampling;   // unset: the client's configured sampling
  // Where the request belongs, e.g. {"sample": 2, "turn": 0}: never sent to a server; the
  // replay provider picks the recorded answer that carries the same keys.
  nlohmann::json tag = nullptr;
};

struct Usage {
  long prompt_tokens = 0;
  long completion_tokens = 0;   // includes reasoning tokens where the provider counts them so
  long reasoning_tokens = 0;
  long total_tokens = 0;
};

// One try at a request, as logged and recorded.
struct AttemptRecord {
  int number = 0;             // 1-based
  double start_s = 0;         // since the request began
  double duration_s = 0;
  int http_status = 0;        // 0: no HTTP answer (connect failure, timeout, ...)
  std::string outcome;        // "ok" or an ErrorKind name
  std::string message;        // empty on success
  double wait_s = 0;          // backoff slept after this attempt before the next one
};

struct ChatResponse {
  std::string text;
  std::string reasoning;
  std::string finish_reason;  // "stop", "length", "end_turn", "refusal", ... as the provider says
  std::string refusal;        // OpenAI's refusal field, when the model declined
  std::string model;          // as reported by the server
  Usage usage;
  double latency_s = 0;       // whole request, retries and waits included
  double first_token_s = -1;  // time to the first streamed delta of the successful attempt; -1: none
  std::vector<AttemptRecord> attempts;
  nlohmann::json logprobs = nlohmann::json::array();  // OpenAI "logprobs.content" entries, concatenated
  std::vector<long> token_ids;                        // completion token ids, when the server returns them
};

// What a streaming client reports as the answer arrives.
struct StreamEvent {
  enum class Kind {
    Text,       // a piece of the answer
    Reasoning,  // a piece of the reasoning (thinking) trace
    Restart,    // a retry began after part of an answer had streamed: discard what came so far
  };
  Kind kind = Kind::Text;
  std::string_view text;
};
using StreamCallback = std::function<void(const StreamEvent&)>;

nlohmann::json to_json(const Usage& u);
nlohmann::json to_json(const AttemptRecord& a);
nlohmann::json to_json(const ChatResponse& r);

}  // namespace kagent::llm
