// What the model sees of earlier turns (the history policies). The message list is the
// loop's state; this decides how much of it goes into the next request:
//   full     every earlier answer whole, reasoning included (as <think>...</think>)
//   kernels  every earlier turn's code and feedback, no reasoning or prose (Kevin's way; default)
//   last     only the latest turn's code and feedback
// A token budget then drops the oldest turns first; the latest turn always stays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llm/llm_types.h"
#include "prompt/answer_format.h"
#include "prompt/template.h"
#include "trajectory/trajectory.h"

namespace kagent::loop {

enum class HistoryPolicy { Full, Kernels, Last };
std::string to_string(HistoryPolicy p);
HistoryPolicy history_policy_from_string(const std::string& s);  // std::invalid_argument when unknown

struct HistoryOptions {
  HistoryPolicy policy = HistoryPolicy::Kernels;
  std::optional<int64_t> max_tokens;    // for the whole request (system prompt included); none: no limit
  size_t max_prose_bytes = 4000;        // an earlier answer without code (format error), cut to this
};

// A rough token count (4 bytes a token; code tokenizes a little denser, prose looser). Only
// used to trim history, never reported as a count.
int64_t estimate_tokens(const std::string& text);

struct History {
  std::vector<llm::ChatMessage> messages;  // user task, then assistant/user pairs
  int omitted_turns = 0;                   // earlier turns left out (policy or budget)
};

// The messages of the next request after `turns`. `system_prompt` only counts against the
// budget. The note on omitted turns is prompts/history_cut.txt (variables: omitted, policy).
History build_history(const std::string& system_prompt, const std::string& task_prompt,
                      const std::vector<traj::Turn>& turns, prompt::AnswerFormat format, const HistoryOptions& options,
                      const prompt::TemplateSet& templates);

}  // namespace kagent::loop
