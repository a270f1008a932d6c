// At most N chats at once through another client; the others wait for a free slot (a wait
// that Ctrl-C ends). `kagent collect` runs many samples, each on its own thread: this keeps
// the requests in flight to the model server at the configured limit (--max-in-flight).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>

#include "llm/llm_client.h"

namespace kagent::llm {

class LimitedClient : public LlmClient {
 public:
  LimitedClient(std::unique_ptr<LlmClient> inner, int max_in_flight, const CancelToken* cancel = nullptr);
  ChatResponse chat(const ChatRequest& req, const StreamCallback& on_event) override;
  std::string describe() const override { return inner_->describe(); }
  int in_flight() const;

 private:
  std::unique_ptr<LlmClient> inner_;
  int limit_;
  const CancelToken* cancel_;
  mutable std::mutex mu_;
  std::condition_variable free_;
  int running_ = 0;
};

}  // namespace kagent::llm
