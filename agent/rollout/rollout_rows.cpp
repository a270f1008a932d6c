#include "rollout/rollout_rows.h"

#include <set>
#include <string>

#include "common/json_optional.h"
#include "dataset/turn_record.h"
#include "rollout/returns.h"

namespace kagent::rollout {

using nlohmann::json;

namespace {

// Keys of a turn's pass-through record that a trainer needs for off-policy corrections.
constexpr const char* kCarried[] = {"prompt_token_ids", "token_ids", "logprobs"};

json messages_json(const std::vector<traj::Message>& messages) {
  json m = json::array();
  for (const auto& msg : messages) m.push_back({{"role", msg.role}, {"content", msg.content}});
  return m;
}

}  // namespace

std::vector<json> sample_rows(const std::vector<dataset::SourceTrajectory>& runs, const RolloutOptions& opts) {
  std::vector<json> rows;
  std::vector<double> returns;
  std::vector<std::string> tasks;
  for (const auto& src : runs) {
    const auto& t = src.trajectory;
    const auto rewards = turn_rewards(t, opts.preset);
    const auto ret = discounted_returns(rewards, opts.gamma);
    for (size_t i = 0; i < t.turns.size(); ++i) {
      const auto& turn = t.turns[i];
      json row = {{"task", dataset::task_of(t)},
                  {"run", src.run},
                  {"sample", t.sample},
                  {"turn", turn.index},
                  {"prompt", messages_json(turn.messages)},
                  {"response", turn.answer},
                  {"reasoning", turn.reasoning},
                  {"speedup_eager", json_or_null(turn.speedup_eager())},
                  {"speedup_compiled", json_or_null(turn.speedup_compiled())},
                  // The speedup's interval where its evaluation ran paired rounds (--speedup-rounds).
                  {"speedup_rounds", turn.eval && turn.eval->timing && turn.eval->timing->rounds
                                         ? json(*turn.eval->timing->rounds)
                                         : json(nullptr)},
                  {"reward", rewards[i]},
                  {"reward_policy", to_string(opts.preset.policy)},
                  {"return", ret[i]}};
      // problem, format, status (the run's ruling policy's verdict), status_policy, verdicts
      row.update(dataset::turn_record(src, turn));
      if (turn.extra.is_object())
        for (const char* key : kCarried)
          if (turn.extra.contains(key)) row[key] = turn.extra[key];
      rows.push_back(std::move(row));
      returns.push_back(ret[i]);
      tasks.push_back(dataset::task_of(t));
    }
  }
  if (opts.group_normalise) {
    const auto adv = normalise_by_group(returns, tasks);
    for (size_t i = 0; i < rows.size(); ++i) rows[i]["advantage"] = adv[i];
  }
  return rows;
}

std::vector<json> prompt_rows(const std::vector<dataset::SourceTrajectory>& runs, const RolloutOptions& opts) {
  std::vector<json> rows;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& src : runs) {
    const auto& t = src.trajectory;
    // One episode start per problem and answer format: the same problem asked in both formats is
    // two different episodes.
    if (t.turns.empty() || !seen.insert({dataset::task_of(t), src.format}).second) continue;
    const std::string task = dataset::task_of(t);
    // Where each trainer looks for what the episode is: the top level (TRL's reset(**row)),
    // reward_spec (SkyRL's env extras), extra_info and its interaction_kwargs (verl's interaction).
    const json episode = {{"name", "kagent"}, {"task_id", task}, {"problem", task}, {"format", src.format}};
    // The first turn's messages are the system prompt and the task: the episode's start.
    rows.push_back({{"data_source", "kagent/kernelbench"},
                    {"prompt", messages_json(t.turns.front().messages)},
                    {"ability", "cuda_kernel"},
                    {"env_class", "kagent"},
                    {"task_id", task},
                    {"problem", task},
                    {"format", src.format},
                    {"reward_model", {{"style", "rule"}, {"ground_truth", task}}},
                    {"reward_spec", {{"method", "rule"}, {"ground_truth", task}, {"problem", task}, {"format", src.format}}},
                    {"extra_info", {{"index", rows.size()},
                                    {"task_id", task},
                                    {"problem", task},
                                    {"format", src.format},
                                    {"interaction_kwargs", episode},
                                    {"problem_path", t.problem.path},
                                    {"problem_sha256", t.problem.sha256},
                                    {"level", json_or_null(t.problem.level)},
                                    {"op_type", t.problem.op_type},
                                    {"max_turns", t.max_turns},
                                    {"reward", opts.preset},
                                    {"gamma", opts.gamma}}}});
  }
  return rows;
}

}  // namespace kagent::rollout
