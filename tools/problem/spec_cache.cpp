#include "problem/spec_cache.h"

#include <filesystem>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "build_info.h"
#include "common/files.h"
#include "common/sha256.h"

namespace kagent {

namespace fs = std::filesystem;

namespace {
// Bumped when the worker derives more or differently (2: the model's mode, recurrent models on
// the real device), so specs cached before are derived again.
constexpr int kSpecFormat = 2;

fs::path entry(const std::string& cache_dir, const std::string& sha) {
  return fs::path(cache_dir) / "specs" / fmt::format("{}-{}-v{}.json", sha, build::kTorchVersion, kSpecFormat);
}

// The level as the worker derives it from the absolute path (the first "levelN" in it:
// kagent_worker/problem.py), so a cached spec reads as a fresh one would.
std::optional<int> level_in_path(const std::string& path) {
  static const std::regex level(R"(level(\d+))");
  std::smatch m;
  if (!std::regex_search(path, m, level)) return std::nullopt;
  return std::stoi(m[1].str());  // out of range: thrown, and the entry is not used
}
}  // namespace

std::optional<ProblemSpec> load_cached_spec(const std::string& cache_dir, const std::string& problem_path) {
  try {
    const std::string sha = sha256_file_hex(problem_path);
    const fs::path file = entry(cache_dir, sha);
    if (!fs::exists(file)) return std::nullopt;
    ProblemSpec spec = nlohmann::json::parse(read_file(file)).get<ProblemSpec>();
    if (spec.sha256 != sha) return std::nullopt;
    // The entry is keyed by content: identical files share it, but each keeps its own identity
    // (its name is its own file's stem, not the stem of the file that was cached first).
    spec.path = fs::absolute(problem_path).string();
    spec.name = fs::path(spec.path).stem().string();
    spec.level = level_in_path(spec.path);
    return spec;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable file or torn entry: the worker derives it again
  }
}

void store_cached_spec(const std::string& cache_dir, const ProblemSpec& spec) {
  fs::path file = entry(cache_dir, spec.sha256);
  try {
    fs::create_directories(file.parent_path());
    write_file_atomic(file, nlohmann::json(spec).dump());
  } catch (const std::exception&) {
    // A cache is an optimisation; failing to write one is not an error.
  }
}

}  // namespace kagent
