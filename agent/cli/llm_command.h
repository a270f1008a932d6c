// `kagent llm "PROMPT"`: one prompt to the configured model, the answer streamed to stdout,
// reasoning, usage and latency to stderr. Exit statuses are listed in docs/llm.md.
#pragma once

#include "cli/command.h"

namespace kagent::cli {

Command add_llm_command(CLI::App& app);

// Exit statuses of `kagent llm` (docs/llm.md). Other commands talking to a model may reuse them.
enum LlmExit : int {
  kLlmOk = 0,
  kLlmInternal = 1,      // unexpected failure (a bug)
  kLlmConfig = 2,        // bad configuration: config file, provider, no model, replay file
  kLlmMissingKey = 3,
  kLlmUnreachable = 4,   // connection refused / timed out / host unknown, after retries
  kLlmAuth = 5,          // 401 / 403
  kLlmRejected = 6,      // 400 / 404: unknown model, context too long, bad request
  kLlmGaveUp = 7,        // retries exhausted: 429, 5xx, read timeouts, cut streams, malformed JSON
  kLlmExhausted = 8,     // replay file has no more answers
  kLlmInterrupted = 130, // Ctrl-C
};

}  // namespace kagent::cli
