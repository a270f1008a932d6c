// The episodes of `kagent serve`: create (the first observation: system prompt and task), step
// (the model's answer checked, the feedback as the next observation, the reward, done after
// max_turns), read back, delete. Every finished step is on disk before it is answered
// (EpisodeStore); a step's request_id makes retries idempotent: the same id with the same
// action answers the recorded result and never evaluates twice; with another action, 409.
// Steps of one episode run one at a time; episodes run at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "prompt/answer_format.h"
#include "rollout/reward_preset.h"
#include "serve/admission.h"
#include "serve/episode_store.h"
#include "serve/problem_sessions.h"
#include "serve/task_source.h"

namespace kagent::serve {

struct EpisodeLimits {
  int default_max_turns = 4;
  int max_turns_limit = 64;
  rollout::RewardPreset default_reward;
  prompt::AnswerFormat default_format = prompt::AnswerFormat::Cuda;  // --format: for requests that name none
  // With --queue: this node's name, which makes its steps' job keys its own on the cluster (an
  // episode lives on one node; another node may hold an episode of the same id).
  std::string job_scope;
};

// A reward field of a request: a preset name or a preset object; absent: `fallback`.
rollout::RewardPreset reward_from_request(const nlohmann::json& request, const rollout::RewardPreset& fallback);
// A request's "format" ("cuda" | "kernelbench"); absent: `fallback` (the server's --format).
prompt::AnswerFormat format_from_request(const nlohmann::json& request, prompt::AnswerFormat fallback);

class Episodes {
 public:
  Episodes(const EpisodeStore& store, const TaskSource& tasks, ProblemSessions& sessions, Admission& admission,
           EpisodeLimits limits);

  // Reads every episode on disk back; returns warnings about unreadable ones.
  std::vector<std::string> load();

  nlohmann::json create(const nlohmann::json& request);
  nlohmann::json step(const std::string& id, const nlohmann::json& request);
  // The episode as recorded: start, steps, done, and the step a restart cut off ("unfinished").
  nlohmann::json get(const std::string& id);
  void remove(const std::string& id);
  size_t open_count();

 private:
  struct Live {
    EpisodeRecord record;
    std::mutex mu;
  };
  std::shared_ptr<Live> find(const std::string& id);

  const EpisodeStore& store_;
  const TaskSource& tasks_;
  ProblemSessions& sessions_;
  Admission& admission_;
  EpisodeLimits limits_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Live>> live_;
};

}  // namespace kagent::serve
