#include "llm/request_pool.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace kagent::llm {

RequestPool::RequestPool(LlmClient& client, int max_in_flight, const CancelToken* cancel)
    : client_(client), max_in_flight_(std::max(1, max_in_flight)), cancel_(cancel) {}

std::vector<PoolOutcome> RequestPool::run(const std::vector<ChatRequest>& requests, const OnDone& on_done) {
  std::vector<PoolOutcome> out(requests.size());
  std::vector<char> started(requests.size(), 0);
  std::atomic<size_t> next{0};
  std::mutex done_mu;

  auto worker = [&] {
    while (true) {
      if (cancel_ && cancel_->cancelled()) return;
      size_t i = next.fetch_add(1);
      if (i >= requests.size()) return;
      started[i] = 1;
      PoolOutcome o;
      try {
        o.response = client_.chat(requests[i]);
      } catch (const LlmError& e) {
        o.error_kind = e.kind();
        o.error = e.what();
        o.attempts = e.attempts;
      } catch (const std::exception& e) {  // a bug, not an LLM failure: keep the batch going
        o.error_kind = ErrorKind::Network;
        o.error = e.what();
      }
      std::lock_guard lock(done_mu);
      out[i] = std::move(o);
      if (on_done) on_done(i, out[i]);
    }
  };

  size_t n_threads = std::min<size_t>(static_cast<size_t>(max_in_flight_), requests.size());
  std::vector<std::jthread> threads;
  threads.reserve(n_threads);
  for (size_t t = 0; t < n_threads; ++t) threads.emplace_back(worker);
  threads.clear();  // joins

  for (size_t i = 0; i < requests.size(); ++i)
    if (!started[i]) {
      out[i].error_kind = ErrorKind::Cancelled;
      out[i].error = "cancelled before it started";
    }
  return out;
}

}  // namespace kagent::llm
