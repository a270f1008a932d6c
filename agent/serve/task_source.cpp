#include "serve/task_source.h"

#include <regex>
#include <set>

#include "common/files.h"
#include "common/sha256.h"
#include "serve/api_error.h"

namespace kagent::serve {

namespace fs = std::filesystem;

namespace {

// A KernelBench problem file by its text: it defines Model, get_inputs and get_init_inputs
// (what the worker loads). Other Python files of a tree (helpers, __init__.py) are no tasks.
bool looks_like_problem(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.rfind("__", 0) == 0 || name[0] == '.') return false;
  std::string text;
  try {
    text = read_file(file);
  } catch (const std::exception&) {
    return false;
  }
  static const std::regex model(R"((^|\n)class\s+Model\b)"), inputs(R"((^|\n)def\s+get_inputs\s*\()"),
      init(R"((^|\n)def\s+get_init_inputs\s*\()");
  return std::regex_search(text, model) && std::regex_search(text, inputs) && std::regex_search(text, init);
}

}  // namespace

TaskSource::TaskSource(const fs::path& suite_root, const fs::path& data_dir) : problems_dir_(data_dir / "problems") {
  if (suite_root.empty()) return;
  if (!fs::is_directory(suite_root)) throw std::runtime_error("no such folder");
  std::map<std::string, int> stems;
  std::error_code ec;
  size_t python_files = 0;
  for (auto it = fs::recursive_directory_iterator(suite_root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".py") continue;
    ++python_files;
    if (!looks_like_problem(it->path())) continue;
    // Lexically: a suite of symlinks keeps its own layout (fs::relative would follow the link).
    const fs::path rel = it->path().lexically_relative(suite_root);
    const std::string stem = it->path().stem().string();
    tasks_[(rel.parent_path() / stem).generic_string()] = fs::absolute(it->path()).string();
    ++stems[stem];
  }
  if (ec) throw std::runtime_error("cannot list " + suite_root.string() + ": " + ec.message());
  if (tasks_.empty())
    throw std::runtime_error(python_files == 0 ? "no problem in it (no .py file)"
                                               : std::to_string(python_files) +
                                                     " .py file(s), none a KernelBench problem (defining Model, "
                                                     "get_inputs and get_init_inputs)");
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
