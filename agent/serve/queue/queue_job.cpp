#include "serve/queue/queue_job.h"

#include <chrono>

#include "common/sha256.h"

namespace kagent::serve {

using nlohmann::json;

void to_json(json& j, const QueueJob& job) {
  j = {{"key", job.key},       {"sha256", job.sha256}, {"problem_path", job.problem_path},
       {"problem_name", job.problem_name}, {"problem_source", job.problem_source}, {"format", job.format},
       {"code", job.code},     {"front", job.front},   {"enqueued_ms", job.enqueued_ms}};
}

void from_json(const json& j, QueueJob& job) {
  job.key = j.at("key").get<std::string>();
  job.sha256 = j.at("sha256").get<std::string>();
  job.problem_path = j.at("problem_path").get<std::string>();
  job.problem_name = j.at("problem_name").get<std::string>();
  job.problem_source = j.at("problem_source").get<std::string>();
  job.format = j.at("format").get<std::string>();
  job.code = j.at("code").get<std::string>();
  job.front = j.value("front", "");
  job.enqueued_ms = j.value("enqueued_ms", int64_t{0});
}

std::string job_content_sha(const std::string& problem_source, const std::string& format, const std::string& code) {
  // Lengths first: no two different triples hash the same text.
  return sha256_hex(std::to_string(problem_source.size()) + ":" + problem_source + std::to_string(format.size()) + ":" +
                    format + code);
}

void to_json(json& j, const QueueResult& r) {
  j = {{"sha256", r.sha256}, {"node", r.node}};
  if (r.result) j["result"] = *r.result;
  if (r.error_status) j["error"] = {{"status", r.error_status}, {"code", r.error_code}, {"message", r.error_message}};
}

void from_json(const json& j, QueueResult& r) {
  r.sha256 = j.at("sha256").get<std::string>();
  r.node = j.value("node", "");
  if (j.contains("result")) r.result = j["result"].get<EvalResult>();
  if (j.contains("error")) {
    r.error_status = j["error"].at("status").get<int>();
    r.error_code = j["error"].at("code").get<std::string>();
    r.error_message = j["error"].at("message").get<std::string>();
  }
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace kagent::serve
