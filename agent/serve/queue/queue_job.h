// A job on the cluster's stream and its result, as every node reads and writes them, and the
// Redis names all nodes agree on. A job is one answer to evaluate against one problem; the
// problem's source travels with it, so a node whose suite sits in another folder, or a problem
// a request gave as reference_code on another node, evaluates the same file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result/eval_result.h"

namespace kagent::serve {

namespace queue_keys {
inline const std::string kStream = "kagent:jobs";  // the jobs, waiting or running
inline const std::string kGroup = "kagent";        // every node's workers read as this consumer group
inline const std::string kNodes = "kagent:nodes";  // every node that ever joined (a set)
inline std::string result(const std::string& job_key) { return "kagent:result:" + job_key; }
// The claim on a key (SET NX): the stream entry of its one job, so a retry on another front
// waits for that job instead of adding a second.
inline std::string job(const std::string& job_key) { return "kagent:job:" + job_key; }
inline std::string node(const std::string& name) { return "kagent:node:" + name; }  // a hash with a TTL: its heartbeat
}  // namespace queue_keys

struct QueueJob {
  // The idempotency key: a request_id's (so a retry on any front finds the result) or a fresh
  // one. The first result stored under it wins (SET NX); every later run answers that one.
  std::string key;
  std::string sha256;  // of the problem, format and code: the same key with other content is a conflict
  std::string problem_path, problem_name, problem_source;  // the front's path, the file's name, its text
  std::string format;  // cuda | kernelbench
  std::string code;
  std::string front;   // the node whose front took the request
  int64_t enqueued_ms = 0;  // wall clock, for the waiting time
};

void to_json(nlohmann::json& j, const QueueJob& job);
void from_json(const nlohmann::json& j, QueueJob& job);

// What sha256 covers: a retry must send the same problem, format and code.
std::string job_content_sha(const std::string& problem_source, const std::string& format, const std::string& code);

// A job's result as stored at queue_keys::result(key): the verdict, or the error the request
// answers (a problem that cannot load: 422), and which node's worker made it.
struct QueueResult {
  std::string sha256;
  std::optional<EvalResult> result;
  int error_status = 0;
  std::string error_code, error_message;
  std::string node;
};

void to_json(nlohmann::json& j, const QueueResult& r);
void from_json(const nlohmann::json& j, QueueResult& r);

int64_t wall_ms();

}  // namespace kagent::serve
