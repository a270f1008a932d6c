#include "serve/api_schema.h"

namespace kagent::serve {

namespace {

using nlohmann::json;

// What a route can answer, status by status (the codes each error carries). Every route may also
// answer those of `every_route` below; the routes that evaluate or open an episode wait for the
// workers, hence 503 (agent/serve/http_server.cpp, `needs_ready`).
constexpr const char* kBadBody = "bad_request | malformed_json";
// With --queue redis:// (docs/serve.md, "Several machines"): a request answers queue_unavailable
// once Redis has been away past --queue-retry-s, stopping while its node stops; /health says
// degraded while Redis is away.
constexpr const char* kUnavailable =
    "starting (Retry-After) | no_gpu | workers_failed | with --queue redis://: queue_unavailable (Retry-After), "
    "stopping (Retry-After), degraded (/health)";
constexpr const char* kQueueTimeout = "queue_timeout (--queue redis://: no node answered the job in time)";
constexpr const char* kQueueFull = "queue_full (Retry-After)";
constexpr const char* kInternal =
    "internal | with --queue redis://: job_abandoned (every node that took the job died on it, --queue-max-attempts)";

json route(const char* method, const char* path, json request, json response, json statuses) {
  json r = {{"method", method}, {"path", path}, {"statuses", std::move(statuses)}};
  if (!request.is_null()) r["request"] = std::move(request);
  if (!response.is_null()) r["response"] = std::move(response);
  return r;
}

}  // namespace

json api_schema(size_t max_body_bytes, double task_timeout_s) {
  const json problem = {"task_id | problem (absolute path) | reference_code",
                        "format: cuda | kernelbench (default: the server's --format, cuda unless told)"};
  return {
      {"version", 2},
      {"auth", "Authorization: Bearer <token> on every route but /health, when the server has a token"},
      {"limits", {{"max_body_bytes", max_body_bytes},
                  {"task_timeout_s", task_timeout_s},
                  {"client_timeout", "set the client's limit above task_timeout_s plus queueing (429 says when the queue is full)"}}},
      {"routes",
       json::array({
           route("POST", "/v1/episodes",
                 {"task_id | problem | reference_code", "format? (cuda | kernelbench)", "max_turns?", "seed?",
                  "reward? (preset name or object)", "policy? (kernelbench | strict; default: the server's)", "episode_id?"},
                 {"episode_id", "observation.messages", "done"},
                 {{"200", "the episode"}, {"400", kBadBody}, {"404", "unknown_task | unknown_problem"},
                  {"409", "episode_exists"}, {"413", "body_too_large"}, {"422", "problem_error"}, {"503", kUnavailable}}),
           route("POST", "/v1/episodes/{id}/step", {"action.text", "request_id (idempotent)", "timeout_s?"},
                 {"observation.messages", "reward (null: compiled, not run, under --compile-only)", "done",
                  "metadata{status,reason,compiled,correct,speedup_eager,speedup_compiled,speedup_rounds,runtime_us,ref_runtime_us,"
                  "time_coverage,guards,policy,verdicts,own_kernel_share,turn}"},
                 {{"200", "the step"}, {"400", kBadBody}, {"404", "unknown_episode"},
                  {"409", "episode_done | request_id_conflict"}, {"413", "body_too_large"}, {"422", "problem_error"},
                  {"429", kQueueFull}, {"503", kUnavailable}, {"504", kQueueTimeout}}),
           route("GET", "/v1/episodes/{id}", nullptr, {"start", "steps", "unfinished", "done"},
                 {{"200", "the episode as recorded"}, {"404", "unknown_episode"}}),
           route("DELETE", "/v1/episodes/{id}", nullptr, {"episode_id", "deleted"},
                 {{"200", "deleted"}, {"404", "unknown_episode"}}),
           route("POST", "/v1/evaluate",
                 {"task_id | problem | reference_code", "kernel_code", "format?", "reward?", "policy?", "async?",
                  "request_id? (--queue redis://: answered once on the whole cluster)"},
                 {"compiled", "correctness", "speedup", "speedup_compiled", "speedup_rounds", "kernel_runtime", "reference_runtime",
                  "time_coverage", "decoy_kernel", "guards", "reward", "status", "reason", "policy", "verdicts",
                  "own_kernel_share"},
                 {{"200", "the result"}, {"202", "async: {id}"}, {"400", kBadBody},
                  {"404", "unknown_task | unknown_problem"}, {"409", "request_id_conflict (--queue redis://)"},
                  {"413", "body_too_large"}, {"422", "problem_error"}, {"429", kQueueFull}, {"503", kUnavailable},
                  {"504", kQueueTimeout}}),
           route("POST", "/v1/evaluate/batch", {"requests[]", "async?", "request_id? (each item's: the id and its place)"},
                 {"results[] | ids[]"},
                 {{"200", "results in order; an item that failed holds its {error} (any status of /v1/evaluate)"},
                  {"202", "async: {ids}"}, {"400", kBadBody}, {"413", "body_too_large"}, {"429", kQueueFull},
                  {"503", kUnavailable}}),
           route("GET", "/v1/results/{id}", nullptr, {"id", "status: queued|running|done", "result?"},
                 {{"200", "the result's state"}, {"404", "unknown_result"}}),
           route("POST", "/v1/reward",
                 {"query[]", "prompts[]?", "labels[] (task ids)",
                  "format? (cuda | kernelbench, for every item; default: the server's --format)", "policy?", "reward?",
                  "request_id? (--queue redis://; each item's: the id and its place)"},
                 {"rewards", "scores", "extra_logs{correct,status}"},
                 {{"200", "one reward per query (null: compiled, not run, under --compile-only)"}, {"400", kBadBody},
                  {"404", "unknown_task"}, {"409", "request_id_conflict (--queue redis://)"}, {"413", "body_too_large"},
                  {"422", "problem_error"}, {"429", kQueueFull}, {"503", kUnavailable}, {"504", kQueueTimeout}}),
           route("GET", "/health", nullptr,
                 {"status", "error", "workers", "device", "compile_only", "episodes_open", "tasks",
                  "queue? (--queue redis://: this node, the cluster's depth, nodes and nodes lost)"},
                 {{"200", "ok"}, {"503", kUnavailable}}),
           route("GET", "/metrics", nullptr, nullptr, {{"200", "Prometheus text"}}),
           route("GET", "/v1/schema", nullptr, nullptr, {{"200", "this schema"}}),
       })},
      {"every_route", {{"401", "missing_token"}, {"403", "wrong_token"}, {"404", "not_found (no such route)"},
                       {"500", kInternal}}},
      {"errors", {{"400", kBadBody}, {"401", "missing_token"}, {"403", "wrong_token"},
                  {"404", "unknown_episode | unknown_task | unknown_problem | unknown_result | not_found"},
                  {"409", "episode_done | request_id_conflict | episode_exists"}, {"413", "body_too_large"},
                  {"422", "problem_error"}, {"429", kQueueFull}, {"503", kUnavailable}, {"504", kQueueTimeout},
                  {"500", kInternal}}},
      {"problem_fields", problem}};
}

}  // namespace kagent::serve
