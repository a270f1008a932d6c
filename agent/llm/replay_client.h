// replay:FILE — plays recorded answers in order from a JSONL file, one answer per request,
// streamed in word-sized pieces. For demos and tests with no network and no model.
//
// Line format (blank lines and lines starting with '#' are skipped):
//   {"text": "...", "reasoning": "...", "finish_reason": "stop", "model": "m",
//    "usage": {"prompt_tokens": 1, "completion_tokens": 2, "reasoning_tokens": 0},
//    "delay_ms": 0}
// or a failure, which goes through the retry loop like a real one and uses up its line:
//   {"error": {"kind": "rate_limited", "message": "...", "http_status": 429}}
// Only "text" or "error" is required. "problem" (the problem's name), "sample" and "turn"
// (0-based) tie an entry to requests tagged the same (ChatRequest::tag, set by `kagent solve`
// and `kagent collect`); entries without them are played in order to any request, and a
// request without a tag (`kagent llm`) takes every entry in file order. When no entry is left
// for a request, chat() throws TerminalError(Exhausted).
#pragma once

#include <mutex>
#include <vector>

#include "llm/llm_client.h"

namespace kagent::llm {

class ReplayClient : public LlmClient {
 public:
  // Reads the whole file; throws TerminalError(Config) naming the file and line on a bad line.
  ReplayClient(const LlmConfig& cfg, ClientHooks hooks);
  ChatResponse chat(const ChatRequest& req, const StreamCallback& on_event) override;
  std::string describe() const override;
  size_t size() const { return entries_.size(); }

 private:
  ChatResponse play(const nlohmann::json& tag, RetryStream& stream);
  LlmConfig cfg_;
  ClientHooks hooks_;
  std::vector<nlohmann::json> entries_;
  std::mutex mu_;
  std::vector<bool> used_;
  size_t next_ = 0;
};

}  // namespace kagent::llm
