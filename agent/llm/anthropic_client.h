// Anthropic Messages: POST {base}/v1/messages, SSE streaming with typed events, thinking
// blocks (reasoning effort becomes a thinking budget), usage.
#pragma once

#include "llm/http_chat_client.h"

namespace kagent::llm {

class AnthropicClient : public HttpChatClient {
 public:
  using HttpChatClient::HttpChatClient;

  static constexpr int kDefaultMaxTokens = 8192;  // the API requires max_tokens
  static int thinking_budget(const std::string& effort);  // low 2048, medium 8192, high 24576; 0: off

 protected:
  HttpRequest build(const ChatRequest& req, const Sampling& s) const override;
  std::unique_ptr<StreamDecoder> decoder(ChatResponse& out, const StreamCallback& emit) const override;
  void parse_whole(const std::string& body, ChatResponse& out) const override;
};

}  // namespace kagent::llm
