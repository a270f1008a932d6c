// What the two HTTP providers share: one attempt = build the request, POST it, decode the
// stream (or the whole JSON), classify HTTP errors; the retry loop around it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "llm/http_transport.h"
#include "llm/llm_client.h"

namespace kagent::llm {

// Decodes one attempt's streamed body into a ChatResponse, reporting deltas as they come.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  virtual void feed(std::string_view bytes) = 0;
  // End of body: throws RecoverableError(StreamCut) when the answer's end marker never came.
  virtual void finish() = 0;
};

class HttpChatClient : public LlmClient {
 public:
  HttpChatClient(LlmConfig cfg, ClientHooks hooks);
  ChatResponse chat(const ChatRequest& req, const StreamCallback& on_event) override;
  std::string describe() const override;

 protected:
  virtual HttpRequest build(const ChatRequest& req, const Sampling& s) const = 0;
  virtual std::unique_ptr<StreamDecoder> decoder(ChatResponse& out, const StreamCallback& emit) const = 0;
  // A whole (non-streamed) JSON answer; throws RecoverableError(MalformedResponse) if it is not one.
  virtual void parse_whole(const std::string& body, ChatResponse& out) const = 0;

  const LlmConfig cfg_;

 private:
  ChatResponse attempt(const ChatRequest& req, RetryStream& stream);
  ClientHooks hooks_;
  HttpTransport transport_;
};

// Parses JSON or throws RecoverableError(MalformedResponse) naming `what`.
nlohmann::json parse_json_or_throw(std::string_view text, const char* what);

}  // namespace kagent::llm
