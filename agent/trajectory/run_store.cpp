#include "trajectory/run_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "common/files.h"
#include "common/json_optional.h"

namespace kagent::traj {

namespace fs = std::filesystem;

namespace {

using kagent::fsync_dir;
using kagent::read_file;
using kagent::write_all;
using kagent::write_file_atomic;

[[noreturn]] void throw_errno(const std::string& what, const fs::path& p) {
  throw std::system_error(errno, std::generic_category(), what + " " + p.string());
}

std::string dump(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty()) out = "problem";
  return out;
}

// "best.py" for a KernelBench-format candidate (Python with load_inline), "best.cu" otherwise.
std::string best_file_name(const Turn& t) {
  std::string fmt = t.eval ? t.eval->format : "";
  if (fmt == "kernelbench") return "best.py";
  if (fmt == "cuda") return "best.cu";
  bool python = t.code.find("class ModelNew") != std::string::npos ||
                t.code.find("load_inline") != std::string::npos;
  return python ? "best.py" : "best.cu";
}

// partial/sample-<i>.json -> i, or -1.
int partial_sample_index(const fs::path& p) {
  std::string name = p.filename().string();
  const std::string pre = "sample-", post = ".json";
  if (name.size() <= pre.size() + post.size() || name.rfind(pre, 0) != 0 ||
      name.compare(name.size() - post.size(), post.size(), post) != 0)
    return -1;
  std::string digits = name.substr(pre.size(), name.size() - pre.size() - post.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(digits);
}

// Reads trajectories.jsonl. Returns the byte length of the whole lines (a torn tail is not).
size_t scan_lines(const fs::path& file, ResumeState& st) {
  if (!fs::exists(file)) return 0;
  std::string data = read_file(file);
  size_t pos = 0, good_end = 0, lineno = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) {
      st.warnings.push_back("trajectories.jsonl: dropped a torn last line (" + std::to_string(data.size() - pos) +
                            " bytes without a newline)");
      break;
    }
    ++lineno;
    std::string line = data.substr(pos, nl - pos);
    pos = nl + 1;
    good_end = pos;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      Trajectory t = nlohmann::json::parse(line).get<Trajectory>();
      if (st.finished.count(t.sample)) {
        st.warnings.push_back("trajectories.jsonl line " + std::to_string(lineno) + ": sample " +
                              std::to_string(t.sample) + " recorded twice; the first line is kept");
        continue;
      }
      int s = t.sample;
      st.finished.emplace(s, std::move(t));
    } catch (const std::exception& e) {
      st.warnings.push_back("trajectories.jsonl line " + std::to_string(lineno) + " unreadable: " + e.what());
    }
  }
  return good_end;
}

void scan_partials(const fs::path& dir, ResumeState& st) {
  fs::path pdir = dir / kPartialDir;
  if (!fs::is_directory(pdir)) return;
  for (const auto& entry : fs::directory_iterator(pdir)) {
    int i = partial_sample_index(entry.path());
    if (i < 0) continue;
    try {
      Trajectory t = nlohmann::json::parse(read_file(entry.path())).get<Trajectory>();
      if (t.sample != i) throw std::runtime_error("holds sample " + std::to_string(t.sample));
      if (st.finished.count(i)) continue;  // finished after its last partial save
      t.status = SampleStatus::Running;
      st.partial.emplace(i, std::move(t));
    } catch (const std::exception& e) {
      st.warnings.push_back(entry.path().filename().string() + " unreadable (sample restarts): " + e.what());
    }
  }
}

}  // namespace

std::optional<Trajectory> ResumeState::partial_for(int sample) const {
  if (finished.count(sample)) return std::nullopt;
  auto it = partial.find(sample);
  if (it == partial.end()) return std::nullopt;
  return it->second;
}

// ---- JSON of the summary pieces -------------------------------------------------------

void to_json(nlohmann::json& j, const BestKernel& b) {
  j = {{"sample", b.sample}, {"turn", b.turn}, {"score", b.score}, {"speedup_eager", json_or_null(b.speedup_eager)},
       {"speedup_compiled", json_or_null(b.speedup_compiled)}, {"file", b.file}};
}

void to_json(nlohmann::json& j, const SampleOutcome& o) {
  j = {{"sample", o.sample},
       {"status", to_string(o.status)},
       {"stop_reason", to_string(o.stop_reason)},
       {"error", o.error},
       {"turns", o.turns},
       {"correct_turns", o.correct_turns},
       {"best_turn", json_or_null(o.best_turn)},
       {"best_score", json_or_null(o.best_score)},
       {"best_speedup_eager", json_or_null(o.best_speedup_eager)},
       {"best_speedup_compiled", json_or_null(o.best_speedup_compiled)},
       {"tokens", o.tokens}};
}

// ---- RunStore -------------------------------------------------------------------------

std::string RunStore::make_run_name(const std::string& problem, std::time_t when) {
  std::tm tm{};
  localtime_r(&when, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return std::string(buf) + "-" + sanitize(problem);
}

RunStore::RunStore(fs::path dir, nlohmann::json config, Options opts)
    : dir_(std::move(dir)), config_(std::move(config)), opts_(std::move(opts)) {}

RunStore::~RunStore() = default;

std::unique_ptr<RunStore> RunStore::create(const fs::path& runs_root, const std::string& problem,
                                           const nlohmann::json& config, Options opts) {
  fs::create_directories(runs_root);
  std::string base = make_run_name(problem, std::time(nullptr));
  for (int n = 1;; ++n) {
    fs::path dir = runs_root / (n == 1 ? base : base + "-" + std::to_string(n));
    std::error_code ec;
    if (fs::create_directory(dir, ec)) return create_at(dir, config, std::move(opts));  // claimed it
    if (ec) throw std::system_error(ec, "cannot create " + dir.string());
    if (n > 1000) throw std::runtime_error("cannot find a free run folder name under " + runs_root.string());
  }
}

std::unique_ptr<RunStore> RunStore::create_at(const fs::path& dir, const nlohmann::json& config, Options opts) {
  fs::create_directories(dir);
  if (fs::exists(dir / kConfigFile) || fs::exists(dir / kTrajectoriesFile))
    throw std::runtime_error(dir.string() + " already holds a run; resume it instead");
  fs::create_directories(dir / kPartialDir);
  std::unique_ptr<RunStore> s(new RunStore(dir, config, std::move(opts)));
  write_file_atomic(dir / kConfigFile, dump(config, 2) + "\n", s->opts_.durable);
  s->open_append_locked();
  s->write_summary();
  return s;
}

ResumeState RunStore::scan(const fs::path& dir) {
  if (!fs::exists(dir / kConfigFile)) throw std::runtime_error(dir.string() + " is not a run folder (no config.json)");
  ResumeState st;
  st.config = nlohmann::json::parse(read_file(dir / kConfigFile));
  scan_lines(dir / kTrajectoriesFile, st);
  scan_partials(dir, st);
  return st;
}

std::unique_ptr<RunStore> RunStore::open(const fs::path& dir, Options opts) {
  if (!fs::exists(dir / kConfigFile)) throw std::runtime_error(dir.string() + " is not a run folder (no config.json)");
  ResumeState st;
  st.config = nlohmann::json::parse(read_file(dir / kConfigFile));
  fs::path lines = dir / kTrajectoriesFile;
  size_t good = scan_lines(lines, st);
  if (fs::exists(lines) && fs::file_size(lines) != good) fs::resize_file(lines, good);  // cut the torn tail
  fs::create_directories(dir / kPartialDir);
  // Stale partials (the kill came between the append and the unlink) and temp files go.
  for (const auto& entry : fs::directory_iterator(dir / kPartialDir)) {
    int i = partial_sample_index(entry.path());
    bool stale = i >= 0 && st.finished.count(i);
    bool tmp = entry.path().filename().string().find(".tmp.") != std::string::npos;
    if (stale || tmp) fs::remove(entry.path());
  }
  scan_partials(dir, st);

  std::unique_ptr<RunStore> s(new RunStore(dir, st.config, std::move(opts)));
  s->open_append_locked();
  {
    std::lock_guard lock(s->mu_);
    for (const auto& [i, t] : st.finished) {
      s->finished_[i] = true;
      s->note_locked(s->scored(t));
    }
    for (const auto& [i, t] : st.partial) s->note_locked(s->scored(t));
  }
  s->loaded_ = std::move(st);
  s->write_summary();
  return s;
}

void RunStore::open_append_locked() {
  fs::path p = dir_ / kTrajectoriesFile;
  append_fd_.reset(::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!append_fd_) throw_errno("cannot open", p);
  if (opts_.durable) fsync_dir(dir_);
}

ResumeState RunStore::resume() const {
  std::lock_guard lock(mu_);
  return loaded_;
}

bool RunStore::is_finished(int sample) const {
  std::lock_guard lock(mu_);
  return finished_.count(sample) != 0;
}

fs::path RunStore::partial_path(int sample) const {
  return dir_ / kPartialDir / ("sample-" + std::to_string(sample) + ".json");
}

Trajectory RunStore::scored(const Trajectory& t) const {
  Trajectory c = t;
  assign_rewards(c, opts_.rewards);
  return c;
}

void RunStore::save_partial(const Trajectory& t) {
  Trajectory c = scored(t);
  c.updated_at = now_iso8601();
  if (c.run_id.empty()) c.run_id = run_id();
  std::string text = dump(c) + "\n";
  std::lock_guard lock(mu_);
  if (finished_.count(c.sample))
    throw std::logic_error("sample " + std::to_string(c.sample) + " is already finished");
  write_file_atomic(partial_path(c.sample), text, opts_.durable);
  auto before = best_;
  note_locked(c);
  bool new_best = best_.has_value() && (!before || before->sample != best_->sample || before->turn != best_->turn);
  if (new_best) write_summary_locked();
}

void RunStore::finish_sample(const Trajectory& t) {
  if (t.status == SampleStatus::Running)
    throw std::invalid_argument("finish_sample: sample " + std::to_string(t.sample) + " is still running");
  Trajectory c = scored(t);
  c.updated_at = now_iso8601();
  if (c.finished_at.empty()) c.finished_at = c.updated_at;
  if (c.run_id.empty()) c.run_id = run_id();
  std::string line = dump(c);
  if (line.find('\n') != std::string::npos) throw std::logic_error("a trajectory line contains a newline");
  line += '\n';

  std::lock_guard lock(mu_);
  if (finished_.count(c.sample))
    throw std::logic_error("sample " + std::to_string(c.sample) + " is already recorded in trajectories.jsonl");
  fs::path p = dir_ / kTrajectoriesFile;
  // One write(2) on an O_APPEND descriptor: the line lands whole at the end of the file.
  // A regular file takes it in one piece; write_all only matters on a full disk.
  write_all(append_fd_.get(), line, p);
  if (opts_.durable && ::fsync(append_fd_.get()) != 0) throw_errno("fsync", p);
  finished_[c.sample] = true;
  std::error_code ec;
  fs::remove(partial_path(c.sample), ec);  // after the line is durable, never before
  note_locked(c);
  write_summary_locked();
}

void RunStore::note_locked(const Trajectory& t) {
  if (problem_.name.empty()) problem_ = t.problem;
  SampleOutcome o;
  o.sample = t.sample;
  o.status = t.status;
  o.stop_reason = t.stop_reason;
  o.error = t.error;
  o.turns = static_cast<int>(t.turns.size());
  for (const auto& turn : t.turns) o.correct_turns += turn.correct() ? 1 : 0;
  o.best_turn = t.best_turn;
  o.tokens = t.total_tokens();
  if (t.best_turn && *t.best_turn >= 0 && *t.best_turn < o.turns) {
    const Turn& bt = t.turns[*t.best_turn];
    o.best_score = turn_score(bt, opts_.rewards);
    o.best_speedup_eager = bt.speedup_eager();
    o.best_speedup_compiled = bt.speedup_compiled();
    // A strictly higher score replaces the run's best; ties keep the earlier one.
    if (!best_ || *o.best_score > best_->score) write_best_locked(t, *t.best_turn);
  }
  outcomes_[t.sample] = std::move(o);
}

void RunStore::write_best_locked(const Trajectory& t, int turn) {
  const Turn& bt = t.turns[turn];
  BestKernel b;
  b.sample = t.sample;
  b.turn = turn;
  b.score = turn_score(bt, opts_.rewards);
  b.speedup_eager = bt.speedup_eager();
  b.speedup_compiled = bt.speedup_compiled();
  b.file = best_file_name(bt);
  write_file_atomic(dir_ / b.file, bt.code, opts_.durable);
  std::error_code ec;
  fs::remove(dir_ / (b.file == "best.cu" ? "best.py" : "best.cu"), ec);  // only one best file
  best_ = std::move(b);
}

void RunStore::write_summary() {
  std::lock_guard lock(mu_);
  write_summary_locked();
}

void RunStore::write_summary_locked() {
  nlohmann::json samples = nlohmann::json::array();
  TokenCounts total;
  int finished = 0, running = 0, correct = 0;
  for (const auto& [i, o] : outcomes_) {
    samples.push_back(o);
    total += o.tokens;
    if (finished_.count(i)) ++finished;
    else ++running;
    if (o.correct_turns > 0) ++correct;
  }
  nlohmann::json j = {{"run_id", run_id()},
                      {"problem", problem_},
                      {"updated_at", now_iso8601()},
                      {"best", json_or_null(best_)},
                      {"samples_finished", finished},
                      {"samples_in_progress", running},
                      {"samples_with_correct", correct},
                      {"tokens", total},
                      {"rewards", opts_.rewards},
                      {"samples", samples}};
  write_file_atomic(dir_ / kSummaryFile, dump(j, 2) + "\n", opts_.durable);
}

std::optional<BestKernel> RunStore::best() const {
  std::lock_guard lock(mu_);
  return best_;
}

std::vector<SampleOutcome> RunStore::outcomes() const {
  std::lock_guard lock(mu_);
  std::vector<SampleOutcome> v;
  for (const auto& [i, o] : outcomes_) v.push_back(o);
  return v;
}

}  // namespace kagent::traj
