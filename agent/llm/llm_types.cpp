#include "llm/llm_types.h"

namespace kagent::llm {

nlohmann::json to_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"total_tokens", u.total_tokens}};
}

nlohmann::json to_json(const AttemptRecord& a) {
  return {{"number", a.number},       {"start_s", a.start_s}, {"duration_s", a.duration_s},
          {"http_status", a.http_status}, {"outcome", a.outcome}, {"message", a.message},
          {"wait_s", a.wait_s}};
}

nlohmann::json to_json(const ChatResponse& r) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const auto& a : r.attempts) attempts.push_back(to_json(a));
  nlohmann::json j = {{"text", r.text},
                      {"reasoning", r.reasoning},
                      {"finish_reason", r.finish_reason},
                      {"model", r.model},
                      {"usage", to_json(r.usage)},
                      {"latency_s", r.latency_s},
                      {"first_token_s", r.first_token_s},
                      {"attempts", attempts}};
  if (!r.refusal.empty()) j["refusal"] = r.refusal;
  if (!r.logprobs.empty()) j["logprobs"] = r.logprobs;
  if (!r.token_ids.empty()) j["token_ids"] = r.token_ids;
  return j;
}

}  // namespace kagent::llm
