#include "serve/episodes.h"

#include <random>
#include <regex>

#include <fmt/format.h>

#include "common/sha256.h"
#include "serve/answer_check.h"
#include "serve/api_error.h"
#include "serve/verdict_json.h"
#include "trajectory/trajectory.h"

namespace kagent::serve {

using nlohmann::json;

namespace {

std::string new_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("ep-{:016x}", rng());
}

const std::regex& id_pattern() {
  static const std::regex re("[A-Za-z0-9_.-]{1,96}");
  return re;
}

}  // namespace

rollout::RewardPreset reward_from_request(const json& request, const rollout::RewardPreset& fallback) {
  rollout::RewardPreset preset = fallback;
  if (request.contains("reward") && !request["reward"].is_null()) {
    try {
      // A preset named or configured by the request rewards under the server's policy unless
      // the reward config or the request's "policy" says otherwise.
      if (request["reward"].is_string()) {
        preset = rollout::reward_preset(request["reward"].get<std::string>());
        preset.policy = fallback.policy;
      } else {
        preset = request["reward"].get<rollout::RewardPreset>();
        if (!request["reward"].contains("policy")) preset.policy = fallback.policy;
      }
    } catch (const std::exception& e) {
      throw ApiError(400, "bad_request", std::string("reward: ") + e.what());
    }
  }
  if (request.contains("policy")) {
    if (!request["policy"].is_string()) throw ApiError(400, "bad_request", "policy must be \"kernelbench\" or \"strict\"");
    try {
      preset.policy = policy_from_string(request["policy"].get<std::string>());
    } catch (const std::exception& e) {
      throw ApiError(400, "bad_request", std::string("policy: ") + e.what());
    }
  }
  return preset;
}

prompt::AnswerFormat format_from_request(const json& request, prompt::AnswerFormat fallback) {
  if (!request.contains("format")) return fallback;
  const json& f = request["format"];
  if (f == "cuda") return prompt::AnswerFormat::Cuda;
  if (f == "kernelbench") return prompt::AnswerFormat::KernelBench;
  throw ApiError(400, "bad_request", "format must be \"cuda\" or \"kernelbench\"");
}

Episodes::Episodes(const EpisodeStore& store, const TaskSource& tasks, ProblemSessions& sessions, Admission& admission,
                   EpisodeLimits limits)
    : store_(store), tasks_(tasks), sessions_(sessions), admission_(admission), limits_(std::move(limits)) {}

std::vector<std::string> Episodes::load() {
  std::vector<std::string> warnings;
  auto records = store_.load_all(warnings);
  std::lock_guard lock(mu_);
  for (auto& r : records) {
    if (r.deleted) continue;
    auto live = std::make_shared<Live>();
    live->record = std::move(r);
    live_[live->record.id()] = std::move(live);
  }
  return warnings;
}

size_t Episodes::open_count() {
  std::lock_guard lock(mu_);
  return live_.size();
}

std::shared_ptr<Episodes::Live> Episodes::find(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) throw ApiError(404, "unknown_episode", "no episode '" + id + "'");
  return it->second;
}

json Episodes::create(const json& req) {
  const std::string problem = tasks_.resolve(req);
  const auto format = format_from_request(req, limits_.default_format);
  const auto preset = reward_from_request(req, limits_.default_reward);
  const json max_turns = req.value("max_turns", json(limits_.default_max_turns));
  if (!max_turns.is_number_integer() || max_turns.get<int>() < 1 || max_turns.get<int>() > limits_.max_turns_limit)
    throw ApiError(400, "bad_request", fmt::format("max_turns must be an integer from 1 to {}", limits_.max_turns_limit));
  if (req.contains("seed") && !req["seed"].is_number_integer()) throw ApiError(400, "bad_request", "seed must be an integer");
  std::string id = new_id();
  if (req.contains("episode_id")) {
    if (!req["episode_id"].is_string() || !std::regex_match(req["episode_id"].get<std::string>(), id_pattern()))
      throw ApiError(400, "bad_request", "episode_id must be 1-96 letters, digits, '_', '-', '.'");
    id = req["episode_id"].get<std::string>();
  }
  const auto prompts = sessions_.prompts_for(problem, format);
  json observation = {{"messages", json::array({{{"role", "system"}, {"content", prompts.system}},
                                                {{"role", "user"}, {"content", prompts.task}}})}};
  auto live = std::make_shared<Live>();
  live->record.start = {{"episode_id", id},
                        {"task", req.value("task_id", sessions_.spec(problem).name)},
                        {"problem", problem},
                        {"format", prompt::to_string(format)},
                        {"max_turns", max_turns},
                        {"seed", req.value("seed", json(nullptr))},
                        {"reward", preset},
                        {"created_at", traj::now_iso8601()},
                        {"observation", observation}};
  {
    std::lock_guard lock(mu_);
    if (live_.count(id) || std::filesystem::exists(store_.dir(id)))
      throw ApiError(409, "episode_exists", "episode '" + id + "' exists already");
    store_.create(live->record);
    live_[id] = live;
  }
  return {{"episode_id", id}, {"observation", observation}, {"done", false}};
}

json Episodes::step(const std::string& id, const json& req) {
  auto live = find(id);
  if (!req.contains("action") || !req["action"].is_object() || !req["action"].contains("text") ||
      !req["action"]["text"].is_string())
    throw ApiError(400, "bad_request", "action.text (a string: the model's answer) is required");
  if (req.contains("request_id") && (!req["request_id"].is_string() || req["request_id"].get<std::string>().empty()))
    throw ApiError(400, "bad_request", "request_id must be a non-empty string");
  if (req.contains("timeout_s") && (!req["timeout_s"].is_number() || req["timeout_s"].get<double>() <= 0))
    throw ApiError(400, "bad_request", "timeout_s must be a positive number");
  const std::string text = req["action"]["text"].get<std::string>();
  const std::string action_sha = sha256_hex(text);
  std::lock_guard lock(live->mu);
  auto& rec = live->record;
  const std::string request_id = req.value("request_id", fmt::format("auto-{}", rec.steps.size()));
  for (const auto& s : rec.steps)
    if (s.request_id == request_id) {
      if (s.action_sha256 != action_sha)
        throw ApiError(409, "request_id_conflict", "request_id '" + request_id + "' was used for another action");
      return s.response;  // a retry: the recorded answer, not a second evaluation
    }
  if (rec.done()) throw ApiError(409, "episode_done", "episode '" + id + "' is done; start a new one");
  Admission::Ticket ticket(admission_);
  if (!ticket.ok()) throw ApiError(429, "queue_full", "the evaluation queue is full; retry later", 2);
  const int turn = static_cast<int>(rec.steps.size());
  store_.begin_step(id, {{"request_id", request_id}, {"turn", turn}, {"action_sha256", action_sha},
                         {"started_at", traj::now_iso8601()}});
  const auto format = prompt::answer_format_from_string(rec.start.at("format").get<std::string>());
  const auto preset = rec.start.at("reward").get<rollout::RewardPreset>();
  const std::string problem = rec.start.at("problem").get<std::string>();
  Checked c;
  try {
    c = check_answer(sessions_, problem, format, text, AnswerText::Answer, store_.dir(id) / fmt::format("turn-{}", turn),
                     preset, fmt::format("step:{}:{}:{}", limits_.job_scope, id, request_id));
  } catch (...) {
    store_.cancel_step(id);  // answered with an error: no step was taken, none is pending
    throw;
  }
  const std::string feedback = c.result ? sessions_.prompts().feedback_prompt(*c.result, &sessions_.spec(problem))
                                        : sessions_.prompts().format_error_prompt(*c.format_error, format);
  const bool done = turn + 1 >= rec.max_turns();
  json response = {{"episode_id", id},
                   {"observation", {{"messages", json::array({{{"role", "user"}, {"content", feedback}}})}}},
                   {"reward", reward_json(c.reward)},
                   {"done", done},
                   {"metadata", step_metadata(c.result ? &*c.result : nullptr, c.format_error ? &*c.format_error : nullptr,
                                              turn, preset.policy)}};
  StepRecord step{request_id, action_sha, turn, response};
  store_.finish_step(id, step);
  rec.steps.push_back(std::move(step));
  rec.unfinished = nullptr;
  return response;
}

json Episodes::get(const std::string& id) {
  auto live = find(id);
  std::lock_guard lock(live->mu);
  const auto& rec = live->record;
  json steps = json::array();
  for (const auto& s : rec.steps) steps.push_back({{"request_id", s.request_id}, {"turn", s.turn}, {"response", s.response}});
  json unfinished = json::array();
  if (!rec.unfinished.is_null()) {
    json u = rec.unfinished;
    u["state"] = "interrupted";  // the server stopped while it ran; a retry with its request_id runs it
    unfinished.push_back(std::move(u));
  }
  return {{"episode_id", id}, {"start", rec.start}, {"steps", std::move(steps)}, {"unfinished", std::move(unfinished)},
          {"done", rec.done()}};
}

void Episodes::remove(const std::string& id) {
  auto live = find(id);
  std::lock_guard lock(live->mu);  // waits for a step in flight
  store_.mark_deleted(id);
  std::lock_guard all(mu_);
  live_.erase(id);
}

}  // namespace kagent::serve
