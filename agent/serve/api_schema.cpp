#include "serve/api_schema.h"

namespace kagent::serve {

nlohmann::json api_schema(size_t max_body_bytes, double task_timeout_s) {
  using nlohmann::json;
  const json problem = {"task_id | problem (absolute path) | reference_code", "format: cuda | kernelbench (default cuda)"};
  return {
      {"version", 1},
      {"auth", "Authorization: Bearer <token> on every route but /health, when the server has a token"},
      {"limits", {{"max_body_bytes", max_body_bytes},
                  {"task_timeout_s", task_timeout_s},
                  {"client_timeout", "set the client's limit above task_timeout_s plus queueing (429 says when the queue is full)"}}},
      {"routes",
       json::array({
           {{"method", "POST"}, {"path", "/v1/episodes"},
            {"request", {"task_id | problem | reference_code", "format?", "max_turns?", "seed?", "reward? (preset name or object)",
                         "policy? (kernelbench | strict; default: the server's)", "episode_id?"}},
            {"response", {"episode_id", "observation.messages", "done"}}},
           {{"method", "POST"}, {"path", "/v1/episodes/{id}/step"},
            {"request", {"action.text", "request_id (idempotent)", "timeout_s?"}},
            {"response", {"observation.messages", "reward", "done",
                          "metadata{status,reason,compiled,correct,speedup_eager,speedup_compiled,runtime_us,ref_runtime_us,time_coverage,guards,"
                          "policy,verdicts,own_kernel_share,turn}"}}},
           {{"method", "GET"}, {"path", "/v1/episodes/{id}"}, {"response", {"start", "steps", "unfinished", "done"}}},
           {{"method", "DELETE"}, {"path", "/v1/episodes/{id}"}, {"response", {"episode_id", "deleted"}}},
           {{"method", "POST"}, {"path", "/v1/evaluate"},
            {"request", {"task_id | problem | reference_code", "kernel_code", "format?", "reward?", "policy?", "async?"}},
            {"response", {"compiled", "correctness", "speedup", "speedup_compiled", "kernel_runtime", "reference_runtime",
                          "time_coverage", "decoy_kernel", "guards", "reward", "status", "reason", "policy", "verdicts",
                          "own_kernel_share"}}},
           {{"method", "POST"}, {"path", "/v1/evaluate/batch"}, {"request", {"requests[]", "async?"}}, {"response", {"results[] | ids[]"}}},
           {{"method", "GET"}, {"path", "/v1/results/{id}"}, {"response", {"id", "status: queued|running|done", "result?"}}},
           {{"method", "POST"}, {"path", "/v1/reward"}, {"request", {"query[]", "prompts[]", "labels[] (task ids)", "policy?"}},
            {"response", {"rewards", "scores", "extra_logs"}}},
           {{"method", "GET"}, {"path", "/health"}},
           {{"method", "GET"}, {"path", "/metrics"}},
           {{"method", "GET"}, {"path", "/v1/schema"}},
       })},
      {"errors", {{"400", "bad_request | malformed_json"}, {"401", "missing_token"}, {"403", "wrong_token"},
                  {"404", "unknown_episode | unknown_task | unknown_problem | unknown_result | not_found"},
                  {"409", "episode_done | request_id_conflict | episode_exists"}, {"413", "body_too_large"},
                  {"422", "problem_error"}, {"429", "queue_full (Retry-After)"}, {"503", "starting (Retry-After)"},
                  {"500", "internal"}}},
      {"problem_fields", problem}};
}

}  // namespace kagent::serve
