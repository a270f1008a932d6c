#include "collect/collection_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/files.h"
#include "metrics/sample_outcome.h"
#include "report/json_lines_file.h"
#include "trajectory/rewards.h"

namespace kagent::collect {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// A line is one write ending in its newline: a last line without one was cut off by a kill.
void cut_torn_tail(const fs::path& file) {
  if (!fs::exists(file)) return;
  const std::string data = read_file(file);
  if (data.empty() || data.back() == '\n') return;
  const size_t keep = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
  fs::resize_file(file, keep);
}

}  // namespace

IndexState read_index(const fs::path& file) {
  IndexState st;
  report::read_json_lines(file, st.warnings, [&](std::string_view text, size_t) {
    json line = json::parse(text);
    const std::string problem = line.at("problem").get<std::string>();
    if (line.value("status", "") == "problem_error") {
      st.problem_errors.emplace(problem, std::move(line));
      return;
    }
    st.samples.emplace(std::pair(problem, line.at("sample").get<int>()), std::move(line));
  });
  return st;
}

json index_line(const std::string& problem, const traj::Trajectory& recorded) {
  // The best turn as the run folder scores it (the loop's copy may not carry it yet).
  traj::Trajectory t = recorded;
  traj::assign_rewards(t);
  const metrics::SampleOutcomeRow r = metrics::outcome_row(problem, "", t);
  json line = {{"problem", problem},
               {"sample", t.sample},
               {"status", t.status == traj::SampleStatus::Failed ? "failed" : "finished"},
               {"correct", r.correct},
               {"best_turn", t.best_turn ? json(*t.best_turn) : json(nullptr)},
               {"speedup_eager", r.speedup_eager ? json(*r.speedup_eager) : json(nullptr)},
               {"speedup_compiled", r.speedup_compiled ? json(*r.speedup_compiled) : json(nullptr)},
               {"turns", t.turns.size()},
               {"tokens", t.total_tokens().total()},
               {"gpu_seconds", r.gpu_seconds},
               {"at", traj::now_iso8601()}};
  return line;
}

json read_manifest(const fs::path& dir) {
  const fs::path file = dir / kManifestFile;
  if (!fs::is_regular_file(file)) throw NotACollection(dir.string() + " holds no kagent collection (no manifest.json)");
  json m;
  try {
    m = json::parse(read_file(file));
  } catch (const std::exception& e) {
    throw NotACollection(file.string() + " is unreadable: " + e.what());
  }
  if (!m.is_object() || m.value("kind", "") != kCollectionKind)
    throw NotACollection(file.string() + " is not a kagent collection's manifest");
  return m;
}

CollectionStore::CollectionStore(fs::path dir, json manifest) : dir_(std::move(dir)), manifest_(std::move(manifest)) {
  const fs::path index = dir_ / kIndexFile;
  index_fd_.reset(::open(index.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!index_fd_) throw std::system_error(errno, std::generic_category(), "cannot open " + index.string());
}

std::unique_ptr<CollectionStore> CollectionStore::create(const fs::path& dir, const json& manifest) {
  fs::create_directories(dir / kProblemsDir);
  if (fs::exists(dir / kManifestFile)) throw std::runtime_error(dir.string() + " already holds a collection; resume it instead");
  write_file_atomic(dir / kManifestFile, dump(manifest, 2) + "\n", true);
  std::unique_ptr<CollectionStore> s(new CollectionStore(dir, manifest));
  fsync_dir(dir);
  return s;
}

std::unique_ptr<CollectionStore> CollectionStore::open(const fs::path& dir) {
  json manifest = read_manifest(dir);
  cut_torn_tail(dir / kIndexFile);
  fs::create_directories(dir / kProblemsDir);
  std::unique_ptr<CollectionStore> s(new CollectionStore(dir, std::move(manifest)));
  IndexState st = read_index(dir / kIndexFile);
  for (const auto& [key, line] : st.samples) s->samples_.insert(key);
  for (const auto& [problem, line] : st.problem_errors) s->problem_errors_[problem] = line.value("reason", "");
  s->warnings_ = std::move(st.warnings);
  return s;
}

void CollectionStore::append_locked(const json& line) {
  const fs::path p = dir_ / kIndexFile;
  write_all(index_fd_.get(), dump(line) + "\n", p);  // one write on O_APPEND: the line lands whole
  if (::fsync(index_fd_.get()) != 0) throw std::system_error(errno, std::generic_category(), "fsync " + p.string());
}

bool CollectionStore::record_sample(const std::string& problem, const traj::Trajectory& t) {
  std::lock_guard lock(mu_);
  if (!samples_.insert({problem, t.sample}).second) return false;
  append_locked(index_line(problem, t));
  return true;
}

bool CollectionStore::record_problem_error(const std::string& problem, const std::string& reason) {
  std::lock_guard lock(mu_);
  if (problem_errors_.count(problem)) return false;
  problem_errors_[problem] = reason;
  append_locked({{"problem", problem}, {"status", "problem_error"}, {"reason", reason}, {"at", traj::now_iso8601()}});
  return true;
}

bool CollectionStore::has_sample(const std::string& problem, int sample) const {
  std::lock_guard lock(mu_);
  return samples_.count({problem, sample}) != 0;
}

bool CollectionStore::has_problem_error(const std::string& problem) const {
  std::lock_guard lock(mu_);
  return problem_errors_.count(problem) != 0;
}

std::optional<std::string> CollectionStore::problem_error(const std::string& problem) const {
  std::lock_guard lock(mu_);
  auto it = problem_errors_.find(problem);
  if (it == problem_errors_.end()) return std::nullopt;
  return it->second;
}

void CollectionStore::write_file(const std::string& name, const std::string& text) const {
  write_file_atomic(dir_ / name, text, true);
}

}  // namespace kagent::collect
