#include "serve/evaluations.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "serve/answer_check.h"
#include "serve/api_error.h"
#include "serve/episodes.h"
#include "serve/verdict_json.h"

namespace kagent::serve {

using nlohmann::json;

namespace {

std::string new_id(const char* prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}-{:016x}", prefix, rng());
}

json error_json(const ApiError& e) { return {{"error", {{"code", e.code}, {"message", e.what()}, {"status", e.status}}}}; }

// A request's optional request_id: with --queue, the key its result keeps in Redis, so a retry
// on any node's front answers that result instead of evaluating again.
std::string request_id_of(const json& req) {
  if (!req.is_object() || !req.contains("request_id")) return {};
  if (!req["request_id"].is_string() || req["request_id"].get<std::string>().empty())
    throw ApiError(400, "bad_request", "request_id must be a non-empty string");
  return req["request_id"].get<std::string>();
}

}  // namespace

Evaluations::Evaluations(const TaskSource& tasks, ProblemSessions& sessions, Admission& admission,
                         std::filesystem::path data_dir, rollout::RewardPreset default_reward,
                         prompt::AnswerFormat default_format, size_t runners, size_t keep_results)
    : tasks_(tasks), sessions_(sessions), admission_(admission), dir_(std::move(data_dir) / "evaluations"),
      default_reward_(std::move(default_reward)), default_format_(default_format), keep_(keep_results) {
  for (size_t i = 0; i < runners; ++i) runners_.emplace_back([this] { runner(); });
}

Evaluations::~Evaluations() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : runners_) t.join();
}

json Evaluations::run_one(const json& req) {
  try {
    if (!req.is_object()) throw ApiError(400, "bad_request", "a request is a JSON object");
    if (!req.contains("kernel_code") || !req["kernel_code"].is_string())
      throw ApiError(400, "bad_request", "kernel_code (a string) is required");
    const std::string request_id = request_id_of(req);
    const std::string problem = tasks_.resolve(req);
    const auto format = format_from_request(req, default_format_);
    const auto preset = reward_from_request(req, default_reward_);
    Admission::Ticket ticket(admission_);
    if (!ticket.ok()) throw ApiError(429, "queue_full", "the evaluation queue is full; retry later", 2);
    Checked c = check_answer(sessions_, problem, format, req["kernel_code"].get<std::string>(), AnswerText::CodeOrAnswer,
                             dir_ / new_id("eval"), preset, request_id.empty() ? "" : "eval:" + request_id);
    return evaluation_json(c.result ? &*c.result : nullptr, c.format_error ? &*c.format_error : nullptr, c.reward,
                           preset.policy);
  } catch (const ApiError& e) {
    return error_json(e);
  } catch (const std::exception& e) {
    return error_json(ApiError(500, "internal", e.what()));
  }
}

json Evaluations::evaluate(const json& req) {
  json r = run_one(req);
  if (r.contains("error")) throw ApiError(r["error"]["status"].get<int>(), r["error"]["code"].get<std::string>(),
                                          r["error"]["message"].get<std::string>(), r["error"]["status"] == 429 ? 2 : 0);
  return r;
}

std::vector<json> Evaluations::run_all(const std::vector<json>& requests, const std::function<json(const json&)>& one) {
  std::vector<json> out(requests.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < requests.size(); i = next++) out[i] = one(requests[i]);
  };
  // As many at once as the evaluation pool can take; the compile pool and workers queue the rest.
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(requests.size(), std::max<size_t>(1, sessions_.pool().size() * 2 + 2));
  for (size_t i = 1; i < n; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  return out;
}

json Evaluations::evaluate_batch(const json& req) {
  if (!req.is_object() || !req.contains("requests") || !req["requests"].is_array())
    throw ApiError(400, "bad_request", "requests (an array of evaluation requests) is required");
  std::vector<json> requests(req["requests"].begin(), req["requests"].end());
  // A batch's request_id names each item that has none by its place: a retried batch repeats them.
  if (const std::string id = request_id_of(req); !id.empty())
    for (size_t i = 0; i < requests.size(); ++i)
      if (requests[i].is_object() && !requests[i].contains("request_id")) requests[i]["request_id"] = fmt::format("{}/{}", id, i);
  if (req.value("async", false)) {
    json ids = json::array();
    for (const auto& r : requests) ids.push_back(submit(r));
    return {{"ids", ids}, {"status", "queued"}};
  }
  return {{"results", run_all(requests, [this](const json& r) { return run_one(r); })}};
}

std::string Evaluations::submit(const json& req) {
  const std::string id = new_id("res");
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= admission_.limit()) throw ApiError(429, "queue_full", "the evaluation queue is full; retry later", 2);
    queue_.emplace_back(id, req);
    results_[id] = {{"id", id}, {"status", "queued"}};
  }
  cv_.notify_one();
  return id;
}

void Evaluations::runner() {
  for (;;) {
    std::pair<std::string, json> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      results_[job.first]["status"] = "running";
    }
    json r = run_one(job.second);
    std::lock_guard lock(mu_);
    results_[job.first] = {{"id", job.first}, {"status", "done"}, {"result", std::move(r)}};
    finished_order_.push_back(job.first);
    while (finished_order_.size() > keep_) {
      results_.erase(finished_order_.front());
      finished_order_.pop_front();
    }
  }
}

json Evaluations::result(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = results_.find(id);
  if (it == results_.end()) throw ApiError(404, "unknown_result", "no result '" + id + "'");
  return it->second;
}

size_t Evaluations::queued() {
  std::lock_guard lock(mu_);
  return queue_.size();
}

json Evaluations::reward(const json& req) {
  auto strings = [&](const char* key, bool required) {
    std::vector<std::string> v;
    if (!req.contains(key)) {
      if (required) throw ApiError(400, "bad_request", std::string(key) + " (an array of strings) is required");
      return v;
    }
    if (!req[key].is_array()) throw ApiError(400, "bad_request", std::string(key) + " must be an array of strings");
    for (const auto& s : req[key]) {
      if (!s.is_string()) throw ApiError(400, "bad_request", std::string(key) + " must be an array of strings");
      v.push_back(s.get<std::string>());
    }
    return v;
  };
  if (!req.is_object()) throw ApiError(400, "bad_request", "the body is a JSON object");
  const auto query = strings("query", true), prompts = strings("prompts", false), labels = strings("labels", true);
  // A prompts array, when sent, pairs with the queries one to one (OpenRLHF sends both).
  if (labels.size() != query.size() || (req.contains("prompts") && prompts.size() != query.size()))
    throw ApiError(400, "bad_request",
                   fmt::format("query, prompts and labels must have the same length (query {}, prompts {}, labels {})",
                               query.size(), req.contains("prompts") ? std::to_string(prompts.size()) : "absent",
                               labels.size()));
  const auto format = format_from_request(req, default_format_);
  const auto preset = reward_from_request(req, default_reward_);
  const std::string request_id = request_id_of(req);  // each item's key: the id and its place
  // Every label a task of the suite before anything runs: an unknown one is the caller's mistake
  // (404), never a reward of 0.
  std::vector<json> items;
  for (size_t i = 0; i < query.size(); ++i) {
    std::string response = query[i];
    if (!prompts.empty() && response.rfind(prompts[i], 0) == 0) response = response.substr(prompts[i].size());
    items.push_back({{"problem", tasks_.resolve_task_id(labels[i])},
                     {"response", response},
                     {"key", request_id.empty() ? "" : fmt::format("reward:{}/{}", request_id, i)}});
  }
  auto one = [&](const json& item) -> json {
    try {
      Admission::Ticket ticket(admission_);
      if (!ticket.ok()) throw ApiError(429, "queue_full", "the evaluation queue is full; retry later", 2);
      Checked c = check_answer(sessions_, item["problem"].get<std::string>(), format, item["response"].get<std::string>(),
                               AnswerText::Answer, dir_ / new_id("reward"), preset, item["key"].get<std::string>());
      const json meta = step_metadata(c.result ? &*c.result : nullptr, c.format_error ? &*c.format_error : nullptr, 0,
                                      preset.policy);
      return {{"reward", reward_json(c.reward)},
              {"correct", meta["correct"].is_null() ? json(nullptr) : json(meta["correct"].get<bool>() ? 1.0 : 0.0)},
              {"status", meta["status"]}};
    } catch (const ApiError& e) {
      return error_json(e);
    } catch (const std::exception& e) {
      return error_json(ApiError(500, "internal", e.what()));
    }
  };
  const auto out = run_all(items, one);
  // One item that could not be scored fails the request with its error (a 429 is retried whole):
  // a reward list is complete or not sent.
  for (const auto& o : out)
    if (o.contains("error"))
      throw ApiError(o["error"]["status"].get<int>(), o["error"]["code"].get<std::string>(),
                     o["error"]["message"].get<std::string>(), o["error"]["status"] == 429 ? 2 : 0);
  json rewards = json::array(), correct = json::array(), status = json::array();
  for (const auto& o : out) {
    rewards.push_back(o["reward"]);
    correct.push_back(o["correct"]);
    status.push_back(o["status"]);
  }
  return {{"rewards", rewards}, {"scores", rewards}, {"extra_logs", {{"correct", correct}, {"status", status}}}};
}

}  // namespace kagent::serve
