#include "worker/client/request_paths.h"

#include <filesystem>
#include <system_error>

namespace kagent {

std::string absolute_path(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();  // no working directory left: as given
}

CandidateRef with_absolute_paths(CandidateRef candidate) {
  candidate.artifact = absolute_path(candidate.artifact);
  candidate.path = absolute_path(candidate.path);
  for (auto& e : candidate.extensions) {
    e.library = absolute_path(e.library);
    e.binding = absolute_path(e.binding);
  }
  return candidate;
}

EvalOptions with_absolute_paths(EvalOptions options) {
  options.cache_dir = absolute_path(options.cache_dir);
  return options;
}

}  // namespace kagent
