// The one interface every LLM provider implements, and the factory that picks one from the
// configuration. chat() retries recoverable failures itself and throws only when done trying.
#pragma once

#include <memory>
#include <string>

#include "llm/cancel.h"
#include "llm/llm_config.h"
#include "llm/llm_error.h"
#include "llm/llm_types.h"
#include "llm/retry_policy.h"

namespace kagent::llm {

// What a client reports to its owner besides the answer.
struct ClientHooks {
  const CancelToken* cancel = nullptr;  // aborts transfers and backoff waits when set
  AttemptLogger on_attempt;             // each failed attempt (the retry loop's log); may be empty
};

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  // Thread-safe: many chats may run at once. on_event gets the answer as it streams (from the
  // calling thread). Returns an empty or refused answer as a result; throws RecoverableError
  // (retries exhausted) or TerminalError, both with .attempts filled.
  virtual ChatResponse chat(const ChatRequest& req, const StreamCallback& on_event = {}) = 0;
  virtual std::string describe() const = 0;  // "openai gpt-4o at https://api.openai.com/v1"
};

// Validates cfg (validate_llm_config) and builds the provider's client.
std::unique_ptr<LlmClient> make_client(const LlmConfig& cfg, ClientHooks hooks = {});

}  // namespace kagent::llm
