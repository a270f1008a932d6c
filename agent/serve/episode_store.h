// Episodes on disk, so that a server killed at any moment loses no finished step:
//   <data>/episodes/<id>/episode.json   the start: task, problem, format, limits, reward, first
//                                       observation (written whole, fsync'd, before the reply)
//   <data>/episodes/<id>/steps.jsonl    one line per finished step (one write + fsync, before
//                                       the reply): request_id, action hash, the whole response
//   <data>/episodes/<id>/pending.json   the step being evaluated; removed once its line is written.
//                                       Found at start: that step was cut off (reported unfinished).
//   <data>/episodes/<id>/deleted        DELETE was called; the folder stays as a record.
// Candidate files of the steps live in the same folder (turn-<n>.cu / .py).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent::serve {

struct StepRecord {
  std::string request_id;
  std::string action_sha256;    // a retry with the same request_id must carry the same action
  int turn = 0;
  nlohmann::json response;      // exactly what the step answered
};

struct EpisodeRecord {
  nlohmann::json start;         // episode.json: episode_id, task, problem, format, max_turns, seed, reward, observation
  std::vector<StepRecord> steps;
  nlohmann::json unfinished;    // pending.json of a step cut off by a restart; null when none
  bool deleted = false;

  std::string id() const { return start.at("episode_id").get<std::string>(); }
  int max_turns() const { return start.at("max_turns").get<int>(); }
  bool done() const { return static_cast<int>(steps.size()) >= max_turns(); }
};

class EpisodeStore {
 public:
  explicit EpisodeStore(std::filesystem::path data_dir);

  // Every episode on disk (deleted ones included, marked). A torn last step line (a kill inside
  // the write) counts as unfinished, like a pending file. Unreadable episodes become warnings.
  std::vector<EpisodeRecord> load_all(std::vector<std::string>& warnings) const;

  std::filesystem::path dir(const std::string& id) const { return root_ / id; }
  void create(const EpisodeRecord& e) const;
  void begin_step(const std::string& id, const nlohmann::json& pending) const;
  void finish_step(const std::string& id, const StepRecord& step) const;
  // The pending step ended without a result (its request was answered with an error).
  void cancel_step(const std::string& id) const;
  void mark_deleted(const std::string& id) const;

 private:
  std::filesystem::path root_;
};

void to_json(nlohmann::json& j, const StepRecord& s);
void from_json(const nlohmann::json& j, StepRecord& s);

}  // namespace kagent::serve
