#include "llm/limited_client.h"

#include <algorithm>
#include <chrono>

#include "llm/llm_error.h"

namespace kagent::llm {

LimitedClient::LimitedClient(std::unique_ptr<LlmClient> inner, int max_in_flight, const CancelToken* cancel)
    : inner_(std::move(inner)), limit_(std::max(1, max_in_flight)), cancel_(cancel) {}

int LimitedClient::in_flight() const {
  std::lock_guard lock(mu_);
  return running_;
}

ChatResponse LimitedClient::chat(const ChatRequest& req, const StreamCallback& on_event) {
  {
    std::unique_lock lock(mu_);
    // Polled, so that a cancel (which has no way to notify us) ends the wait within 100 ms.
    while (!free_.wait_for(lock, std::chrono::milliseconds(100), [&] { return running_ < limit_; }))
      if (cancel_ && cancel_->cancelled()) throw TerminalError(ErrorKind::Cancelled, "cancelled");
    ++running_;
  }
  struct Release {
    LimitedClient& c;
    ~Release() {
      {
        std::lock_guard lock(c.mu_);
        --c.running_;
      }
      c.free_.notify_one();
    }
  } release{*this};
  return inner_->chat(req, on_event);
}

}  // namespace kagent::llm
