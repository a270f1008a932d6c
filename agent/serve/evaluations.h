// Stateless evaluation: POST /v1/evaluate (one kernel), /v1/evaluate/batch (several, checked
// at once), either answered when done or, with "async": true, queued and answered with ids to
// poll at GET /v1/results/{id}; and POST /v1/reward in OpenRLHF's remote-reward shape.
// Async results are kept in memory for the server's life (the most recent `keep_results`).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "prompt/answer_format.h"
#include "rollout/reward_preset.h"
#include "serve/admission.h"
#include "serve/problem_sessions.h"
#include "serve/task_source.h"

namespace kagent::serve {

class Evaluations {
 public:
  Evaluations(const TaskSource& tasks, ProblemSessions& sessions, Admission& admission, std::filesystem::path data_dir,
              rollout::RewardPreset default_reward, prompt::AnswerFormat default_format, size_t runners,
              size_t keep_results = 100000);
  ~Evaluations();
  Evaluations(const Evaluations&) = delete;
  Evaluations& operator=(const Evaluations&) = delete;

  // {task_id|problem|reference_code, kernel_code, format?, reward?}: the result object.
  nlohmann::json evaluate(const nlohmann::json& request);
  // {requests: [...]}: {results: [...]} in order.
  nlohmann::json evaluate_batch(const nlohmann::json& request);
  // Queues one request; returns its id.
  std::string submit(const nlohmann::json& request);
  // {id, status: queued|running|done, result?}; throws ApiError 404 for an unknown id.
  nlohmann::json result(const std::string& id);
  // OpenRLHF: {query: [...], prompts: [...], labels: [...], format?, policy?} -> {rewards, scores,
  // extra_logs}. OpenRLHF sends no format: the server's --format is what its rows need.
  nlohmann::json reward(const nlohmann::json& request);
  size_t queued();

 private:
  nlohmann::json run_one(const nlohmann::json& request);  // never throws: errors become {"error": ...}
  std::vector<nlohmann::json> run_all(const std::vector<nlohmann::json>& requests,
                                      const std::function<nlohmann::json(const nlohmann::json&)>& one);
  void runner();

  const TaskSource& tasks_;
  ProblemSessions& sessions_;
  Admission& admission_;
  std::filesystem::path dir_;
  rollout::RewardPreset default_reward_;
  prompt::AnswerFormat default_format_;  // for requests without "format" (--format)
  size_t keep_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, nlohmann::json>> queue_;
  std::map<std::string, nlohmann::json> results_;  // id -> {status, result?}
  std::deque<std::string> finished_order_;
  bool stop_ = false;
  std::vector<std::thread> runners_;
};

}  // namespace kagent::serve
