// Many chat requests from one process, at most max_in_flight at once, on a pool of threads
// (each transfer borrows a pooled keep-alive connection). Cancellation stops new requests
// and aborts running ones; what already finished is kept.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llm/llm_client.h"

namespace kagent::llm {

struct PoolOutcome {
  std::optional<ChatResponse> response;  // set on success
  std::optional<ErrorKind> error_kind;   // set on failure (Cancelled for requests never started)
  std::string error;
  std::vector<AttemptRecord> attempts;   // of a failed request; a response has its own
  bool ok() const { return response.has_value(); }
};

class RequestPool {
 public:
  // `cancel` should be the token the client was built with, so one Ctrl-C stops both.
  RequestPool(LlmClient& client, int max_in_flight, const CancelToken* cancel = nullptr);

  // Runs every request; outcomes come back in request order. on_done, if given, is called as
  // each request ends (serialized: never two at once), e.g. to save results as they arrive.
  using OnDone = std::function<void(size_t index, const PoolOutcome&)>;
  std::vector<PoolOutcome> run(const std::vector<ChatRequest>& requests, const OnDone& on_done = {});

 private:
  LlmClient& client_;
  int max_in_flight_;
  const CancelToken* cancel_;
};

}  // namespace kagent::llm
