// Where an episode's or evaluation's problem comes from, in the request's own terms:
//   task_id         a problem of the suite the server was started with (--problems DIR):
//                   "19_ReLU" or "level1/19_ReLU";
//   problem         an absolute path to a KernelBench-format file on the server;
//   reference_code  the problem's text itself, saved once under the data folder by its hash.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kagent::serve {

class TaskSource {
 public:
  // `suite_root` empty: task ids are refused. `data_dir`: where reference_code problems go.
  // Tasks are the suite's .py files that define Model, get_inputs and get_init_inputs; throws
  // std::runtime_error (the reason, without the folder's name) when the folder is missing or
  // holds none.
  TaskSource(const std::filesystem::path& suite_root, const std::filesystem::path& data_dir);

  // The problem file of a request object; throws ApiError 400 (none or several given, bad
  // type) or 404 (an unknown task id, a missing file).
  std::string resolve(const nlohmann::json& request) const;
  // Only a task id (OpenRLHF labels, verl/SkyRL ground truth).
  std::string resolve_task_id(const std::string& task_id) const;
  size_t size() const { return tasks_.size(); }
  // One of the suite's problem files (the first by name), empty without a suite: what a server
  // warms its workers with.
  std::string any_path() const { return tasks_.empty() ? std::string() : tasks_.begin()->second; }

 private:
  std::map<std::string, std::string> tasks_;  // "level1/19_ReLU" and a unique "19_ReLU" -> path
  std::filesystem::path problems_dir_;
};

}  // namespace kagent::serve
