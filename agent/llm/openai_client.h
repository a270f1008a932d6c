// OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, DeepSeek, OpenRouter):
// POST {base}/v1/chat/completions, SSE streaming, reasoning_content / reasoning fields,
// <think> blocks split out of content, usage with reasoning tokens, logprobs and token ids.
#pragma once

#include "llm/http_chat_client.h"

namespace kagent::llm {

class OpenAiClient : public HttpChatClient {
 public:
  using HttpChatClient::HttpChatClient;

 protected:
  HttpRequest build(const ChatRequest& req, const Sampling& s) const override;
  std::unique_ptr<StreamDecoder> decoder(ChatResponse& out, const StreamCallback& emit) const override;
  void parse_whole(const std::string& body, ChatResponse& out) const override;
};

}  // namespace kagent::llm
