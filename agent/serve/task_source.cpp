#include "serve/task_source.h"

#include <set>

#include "common/files.h"
#include "common/sha256.h"
#include "serve/api_error.h"

namespace kagent::serve {

namespace fs = std::filesystem;

TaskSource::TaskSource(const fs::path& suite_root, const fs::path& data_dir) : problems_dir_(data_dir / "problems") {
  if (suite_root.empty()) return;
  std::map<std::string, int> stems;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(suite_root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".py") continue;
    // Lexically: a suite of symlinks keeps its own layout (fs::relative would follow the link).
    const fs::path rel = it->path().lexically_relative(suite_root);
    const std::string stem = it->path().stem().string();
    tasks_[(rel.parent_path() / stem).generic_string()] = fs::absolute(it->path()).string();
    ++stems[stem];
  }
  if (ec) throw std::runtime_error("cannot list " + suite_root.string() + ": " + ec.message());
  for (const auto& [rel, path] : std::map<std::string, std::string>(tasks_)) {
    const std::string stem = fs::path(rel).filename().string();
    if (stems[stem] == 1) tasks_[stem] = path;  // a bare name only where it is unambiguous
  }
}

std::string TaskSource::resolve_task_id(const std::string& task_id) const {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) throw ApiError(404, "unknown_task", "no task '" + task_id + "' in the server's suite");
  return it->second;
}

std::string TaskSource::resolve(const nlohmann::json& request) const {
  const int given = request.contains("task_id") + request.contains("problem") + request.contains("reference_code");
  if (given != 1)
    throw ApiError(400, "bad_request", "give exactly one of task_id, problem, reference_code");
  auto text = [&](const char* key) {
    if (!request[key].is_string() || request[key].get<std::string>().empty())
      throw ApiError(400, "bad_request", std::string(key) + " must be a non-empty string");
    return request[key].get<std::string>();
  };
  if (request.contains("task_id")) return resolve_task_id(text("task_id"));
  if (request.contains("problem")) {
    const fs::path p = text("problem");
    if (!p.is_absolute()) throw ApiError(400, "bad_request", "problem must be an absolute path on the server");
    if (!fs::is_regular_file(p)) throw ApiError(404, "unknown_problem", "no problem file " + p.string());
    return p.string();
  }
  const std::string code = text("reference_code");
  const fs::path file = problems_dir_ / ("ref_" + sha256_hex(code).substr(0, 16) + ".py");
  if (!fs::exists(file)) {
    fs::create_directories(problems_dir_);
    write_file_atomic(file, code, /*durable=*/true);
  }
  return file.string();
}

}  // namespace kagent::serve
