#include "serve/episode_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <system_error>

#include "common/fd.h"
#include "common/files.h"

namespace kagent::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr const char* kStart = "episode.json";
constexpr const char* kSteps = "steps.jsonl";
constexpr const char* kPending = "pending.json";
constexpr const char* kDeleted = "deleted";
}  // namespace

void to_json(json& j, const StepRecord& s) {
  j = {{"request_id", s.request_id}, {"action_sha256", s.action_sha256}, {"turn", s.turn}, {"response", s.response}};
}

void from_json(const json& j, StepRecord& s) {
  s.request_id = j.at("request_id").get<std::string>();
  s.action_sha256 = j.at("action_sha256").get<std::string>();
  s.turn = j.at("turn").get<int>();
  s.response = j.at("response");
}

EpisodeStore::EpisodeStore(fs::path data_dir) : root_(std::move(data_dir) / "episodes") { fs::create_directories(root_); }

std::vector<EpisodeRecord> EpisodeStore::load_all(std::vector<std::string>& warnings) const {
  std::vector<EpisodeRecord> out;
  for (const auto& entry : fs::directory_iterator(root_)) {
    if (!entry.is_directory()) continue;
    const fs::path d = entry.path();
    try {
      if (!fs::exists(d / kStart)) continue;  // killed before the episode was created: never answered
      EpisodeRecord e;
      e.start = json::parse(read_file(d / kStart));
      e.deleted = fs::exists(d / kDeleted);
      if (fs::exists(d / kSteps)) {
        const std::string text = read_file(d / kSteps);
        size_t pos = 0;
        while (pos < text.size()) {
          const size_t nl = text.find('\n', pos);
          if (nl == std::string::npos) break;  // torn: the step never finished
          e.steps.push_back(json::parse(text.substr(pos, nl - pos)).get<StepRecord>());
          pos = nl + 1;
        }
      }
      if (fs::exists(d / kPending)) {
        json p = json::parse(read_file(d / kPending));
        const bool recorded = !e.steps.empty() && p.value("request_id", "") == e.steps.back().request_id;
        if (!recorded) e.unfinished = std::move(p);  // else: killed between the line and the unlink
      }
      out.push_back(std::move(e));
    } catch (const std::exception& ex) {
      warnings.push_back(d.filename().string() + ": " + ex.what());
    }
  }
  return out;
}

void EpisodeStore::create(const EpisodeRecord& e) const {
  const fs::path d = dir(e.id());
  fs::create_directories(d);
  write_file_atomic(d / kStart, e.start.dump(2) + "\n", /*durable=*/true);
  fsync_dir(root_);
}

void EpisodeStore::begin_step(const std::string& id, const json& pending) const {
  write_file_atomic(dir(id) / kPending, pending.dump() + "\n", /*durable=*/true);
}

void EpisodeStore::finish_step(const std::string& id, const StepRecord& step) const {
  const fs::path p = dir(id) / kSteps;
  Fd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + p.string());
  const std::string line = json(step).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  write_all(fd.get(), line, p);  // one write: a line is whole or torn at the end, never interleaved
  if (::fsync(fd.get()) != 0) throw std::system_error(errno, std::generic_category(), "fsync " + p.string());
  std::error_code ec;
  fs::remove(dir(id) / kPending, ec);
}

void EpisodeStore::cancel_step(const std::string& id) const {
  std::error_code ec;
  fs::remove(dir(id) / kPending, ec);
}

void EpisodeStore::mark_deleted(const std::string& id) const {
  write_file_atomic(dir(id) / kDeleted, "", /*durable=*/true);
}

}  // namespace kagent::serve
