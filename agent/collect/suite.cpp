#include "collect/suite.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "common/files.h"
#include "common/json_optional.h"
#include "common/sha256.h"
#include "common/utf8.h"

namespace kagent::collect {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxListBytes = 16u << 20;

// "level3" -> 3.
std::optional<int> level_of_folder(const std::string& name) {
  if (name.size() <= 5 || name.size() > 11 || name.rfind("level", 0) != 0) return std::nullopt;  // stoi's range
  const std::string digits = name.substr(5);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  return std::stoi(digits);
}

// The nearest "levelN" folder above the file.
std::optional<int> level_of_path(const fs::path& file) {
  for (fs::path p = file.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
    if (auto l = level_of_folder(p.filename().string())) return l;
  return std::nullopt;
}

std::optional<int> id_of_stem(const std::string& stem) {
  size_t n = 0;
  while (n < stem.size() && std::isdigit(static_cast<unsigned char>(stem[n]))) ++n;
  if (n == 0 || n > 9 || (n < stem.size() && stem[n] != '_')) return std::nullopt;
  return std::stoi(stem.substr(0, n));
}

bool is_problem_file(const fs::directory_entry& e) {
  const std::string name = e.path().filename().string();
  return e.is_regular_file() && e.path().extension() == ".py" && name.rfind("__", 0) != 0 && name[0] != '.';
}

std::vector<fs::path> python_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_problem_file(e)) files.push_back(e.path());
  return files;
}

SuiteProblem problem_from_file(const fs::path& file) {
  SuiteProblem p;
  p.path = fs::absolute(file).lexically_normal().string();
  p.name = file.stem().string();
  p.level = level_of_path(fs::path(p.path));
  p.problem_id = id_of_stem(p.name);
  try {
    p.sha256 = sha256_file_hex(p.path);
  } catch (const std::exception& e) {
    throw SuiteError("unreadable", e.what());
  }
  return p;
}

// Stems may repeat across levels or folders: such names get their level ("level2-1_Conv"),
// else their folder, in front. Decided on the whole suite, so filters never rename a problem.
void make_names_unique(std::vector<SuiteProblem>& problems) {
  auto duplicated = [&](auto key_of) {
    std::map<std::string, int> count;
    for (const auto& p : problems) ++count[key_of(p)];
    std::vector<bool> dup;
    for (const auto& p : problems) dup.push_back(count[key_of(p)] > 1);
    return dup;
  };
  auto dup = duplicated([](const SuiteProblem& p) { return p.name; });
  for (size_t i = 0; i < problems.size(); ++i)
    if (dup[i] && problems[i].level) problems[i].name = fmt::format("level{}-{}", *problems[i].level, problems[i].name);
  dup = duplicated([](const SuiteProblem& p) { return p.name; });
  for (size_t i = 0; i < problems.size(); ++i)
    if (dup[i]) problems[i].name = fs::path(problems[i].path).parent_path().filename().string() + "-" + problems[i].name;
  dup = duplicated([](const SuiteProblem& p) { return p.name; });
  for (size_t i = 0; i < problems.size(); ++i)
    if (dup[i]) throw SuiteError("unreadable", fmt::format("two problems are both named {} ({})", problems[i].name, problems[i].path));
}

}  // namespace

void to_json(nlohmann::json& j, const SuiteProblem& p) {
  j = {{"name", p.name}, {"path", p.path}, {"level", json_or_null(p.level)}, {"problem_id", json_or_null(p.problem_id)},
       {"sha256", p.sha256}};
}

void from_json(const nlohmann::json& j, SuiteProblem& p) {
  p.name = j.at("name").get<std::string>();
  p.path = get_or<std::string>(j, "path", "");
  get_optional(j, "level", p.level);
  get_optional(j, "problem_id", p.problem_id);
  p.sha256 = get_or<std::string>(j, "sha256", "");
}

Suite load_suite(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SuiteError("not_found", "no such suite folder or list file: " + path.string());
  Suite suite;
  suite.root = fs::absolute(path).lexically_normal().string();
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    // KernelBench's layout: level1/ level2/ level3/ under the root.
    bool levels = false;
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_directory() && level_of_folder(e.path().filename().string())) {
        levels = true;
        for (auto& f : python_files(e.path())) files.push_back(std::move(f));
      }
    if (!levels) files = python_files(path);
    if (files.empty())
      throw SuiteError("empty", fmt::format("the suite folder {} holds no problem files (*.py, or level1/ level2/ ... of them)",
                                            path.string()));
  } else {
    // A list names problem files, one a line: a file far larger than any list, or bytes that are
    // not text, is the wrong file (and its "names" would be quoted back in the error line).
    const std::uintmax_t bytes = fs::file_size(path, ec);
    if (ec || !fs::is_regular_file(path)) throw SuiteError("unreadable", "cannot read the list file " + path.string());
    if (bytes > kMaxListBytes)
      throw SuiteError("unreadable", fmt::format("the list file {} is {} bytes; a list of problem files is at most {}",
                                                 path.string(), bytes, kMaxListBytes));
    // Read once: the same bytes are checked and then parsed.
    std::string text;
    try {
      text = read_file(path);
    } catch (const std::exception&) {
      throw SuiteError("unreadable", "cannot read the list file " + path.string());
    }
    if (!is_valid_utf8(text))
      throw SuiteError("unreadable", "the list file " + path.string() + " is not UTF-8 text (not a list of problem files)");
    std::istringstream in(text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const size_t a = line.find_first_not_of(" \t\r");
      if (a == std::string::npos || line[a] == '#') continue;
      const size_t b = line.find_last_not_of(" \t\r");
      fs::path file = line.substr(a, b - a + 1);
      if (file.is_relative()) file = fs::absolute(path).parent_path() / file;
      if (!fs::is_regular_file(file))
        throw SuiteError("not_found", fmt::format("{}:{}: no such problem file: {}", path.string(), n, file.string()));
      files.push_back(file);
    }
    if (files.empty()) throw SuiteError("empty", fmt::format("the list file {} names no problem files", path.string()));
  }
  for (const auto& f : files) suite.problems.push_back(problem_from_file(f));
  std::sort(suite.problems.begin(), suite.problems.end(), [](const SuiteProblem& a, const SuiteProblem& b) {
    return std::tuple(a.level.value_or(1 << 30), a.problem_id.value_or(1 << 30), a.path) <
           std::tuple(b.level.value_or(1 << 30), b.problem_id.value_or(1 << 30), b.path);
  });
  // A list may name a file twice: once is enough.
  suite.problems.erase(std::unique(suite.problems.begin(), suite.problems.end(),
                                   [](const SuiteProblem& a, const SuiteProblem& b) { return a.path == b.path; }),
                       suite.problems.end());
  make_names_unique(suite.problems);
  return suite;
}

std::vector<std::pair<int, int>> parse_id_ranges(const std::string& text) {
  std::vector<std::pair<int, int>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    static const std::regex kRange(R"(\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?)");
    std::smatch m;
    if (!std::regex_match(part, m, kRange)) throw std::invalid_argument(fmt::format("\"{}\" is not an id or a range a-b", part));
    const int a = std::stoi(m[1].str()), b = m[2].matched ? std::stoi(m[2].str()) : a;
    if (b < a) throw std::invalid_argument(fmt::format("the range \"{}\" ends before it starts", part));
    out.emplace_back(a, b);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<SuiteProblem> filter_problems(const std::vector<SuiteProblem>& problems, const SuiteFilter& f) {
  std::optional<std::regex> pattern;
  if (!f.name_pattern.empty()) {
    try {
      pattern.emplace(f.name_pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument(fmt::format("the name pattern \"{}\" is not a regular expression: {}", f.name_pattern, e.what()));
    }
  }
  std::vector<SuiteProblem> out;
  for (const auto& p : problems) {
    if (!f.levels.empty() && (!p.level || std::find(f.levels.begin(), f.levels.end(), *p.level) == f.levels.end())) continue;
    if (!f.id_ranges.empty() &&
        (!p.problem_id || std::none_of(f.id_ranges.begin(), f.id_ranges.end(), [&](const auto& r) {
           return *p.problem_id >= r.first && *p.problem_id <= r.second;
         })))
      continue;
    if (pattern && !std::regex_search(p.name, *pattern)) continue;
    out.push_back(p);
  }
  return out;
}

nlohmann::json to_json(const SuiteFilter& f) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& [a, b] : f.id_ranges) ranges.push_back({a, b});
  return {{"levels", f.levels}, {"ids", ranges}, {"match", f.name_pattern}};
}

int shard_of(const std::string& name, int count) {
  // FNV-1a, 64 bit: stable across platforms and runs (std::hash is neither). Its low bits
  // depend only on the characters' low bits, so splitmix64's finaliser mixes it before the
  // modulo: without it, names spread unevenly over a power-of-two count.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<int>(h % static_cast<uint64_t>(count));
}

std::vector<SuiteProblem> shard_problems(const std::vector<SuiteProblem>& problems, int index, int count) {
  std::vector<SuiteProblem> out;
  for (const auto& p : problems)
    if (shard_of(p.name, count) == index) out.push_back(p);
  return out;
}

std::pair<int, int> parse_shard(const std::string& text) {
  static const std::regex kShard(R"((\d{1,6})/(\d{1,6}))");
  std::smatch m;
  if (!std::regex_match(text, m, kShard)) throw std::invalid_argument(fmt::format("--shard {}: expected i/n, e.g. 0/4", text));
  const int i = std::stoi(m[1].str()), n = std::stoi(m[2].str());
  if (n < 1) throw std::invalid_argument(fmt::format("--shard {}: the count must be at least 1", text));
  if (i >= n)
    throw std::invalid_argument(fmt::format("--shard {}: the index must be below the count (shards are numbered 0 to {})", text, n - 1));
  return {i, n};
}

}  // namespace kagent::collect
