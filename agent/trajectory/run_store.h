// RunStore: one run folder of `kagent solve` and everything written into it.
//
//   runs/<YYYYmmdd-HHMMSS>-<problem>/
//     config.json              the run's settings, written once at creation (atomically)
//     trajectories.jsonl       append-only, ONE line per finished sample (single write + fsync)
//     partial/sample-<i>.json  the in-progress sample, replaced atomically after every turn
//     candidates/s<i>-t<j>.cu  every turn's code; .sass.gz beside it: its SASS (sass_file.h)
//     best.cu | best.py        the best correct kernel so far (highest Kevin score)
//     summary.json             best kernel's speedups, per-sample outcome, token totals
//
// A killed run loses at most the turn in flight: open() + resume() tell which samples are
// finished (skip them) and hand back the partial trajectories of the others (continue at
// next_turn(); recorded turns are never repeated). One store is shared by all sample
// threads of a process: every public method takes one mutex, so lines never interleave.
#pragma once

#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fd.h"
#include "trajectory/rewards.h"
#include "trajectory/trajectory.h"

namespace kagent::traj {

inline constexpr const char* kConfigFile = "config.json";
inline constexpr const char* kTrajectoriesFile = "trajectories.jsonl";
inline constexpr const char* kSummaryFile = "summary.json";
inline constexpr const char* kPartialDir = "partial";

// What a run folder holds, as read back from disk.
struct ResumeState {
  nlohmann::json config;
  std::map<int, Trajectory> finished;   // sample -> its line in trajectories.jsonl
  std::map<int, Trajectory> partial;    // sample -> last saved in-progress state (not finished)
  std::vector<std::string> warnings;    // torn last line, unreadable lines, stale partials, ...

  bool is_finished(int sample) const { return finished.count(sample) != 0; }
  // The partial state of an unfinished sample, or nullopt (start it fresh).
  std::optional<Trajectory> partial_for(int sample) const;
};

struct BestKernel {
  int sample = 0;
  int turn = 0;
  double score = 0;
  std::optional<double> speedup_eager, speedup_compiled;
  std::string file;                     // "best.cu" or "best.py", relative to the run folder
};

// One sample's outcome, for summary.json.
struct SampleOutcome {
  int sample = 0;
  SampleStatus status = SampleStatus::Running;
  StopReason stop_reason = StopReason::None;
  std::string error;
  int turns = 0;
  int correct_turns = 0;
  std::optional<int> best_turn;
  std::optional<double> best_score, best_speedup_eager, best_speedup_compiled;
  TokenCounts tokens;
};

void to_json(nlohmann::json& j, const BestKernel& b);
void to_json(nlohmann::json& j, const SampleOutcome& o);

struct RunStoreOptions {
  RewardConfig rewards;                 // scores turns to pick best turns and the best kernel
  bool durable = true;                  // fsync files and the folder; tests may turn it off
};

class RunStore {
 public:
  using Options = RunStoreOptions;

  // A new run under runs_root: <runs_root>/<YYYYmmdd-HHMMSS>-<problem>, local time, with
  // "-2", "-3", ... appended when that folder exists already.
  static std::unique_ptr<RunStore> create(const std::filesystem::path& runs_root, const std::string& problem,
                                          const nlohmann::json& config, Options opts = {});
  // A new run at exactly `dir` (created when missing). Throws when `dir` already holds a run.
  static std::unique_ptr<RunStore> create_at(const std::filesystem::path& dir, const nlohmann::json& config,
                                             Options opts = {});
  // An existing run, for --resume: reads config.json and the records, cuts a torn last line
  // off trajectories.jsonl, deletes partial files of samples that did finish, rewrites
  // best.* and summary.json from what is recorded. Throws when `dir` holds no run.
  static std::unique_ptr<RunStore> open(const std::filesystem::path& dir, Options opts = {});

  // Reads a run folder without changing it (for curate, report, tests).
  static ResumeState scan(const std::filesystem::path& dir);

  // The folder name, e.g. "20261121-073415-19_ReLU".
  static std::string make_run_name(const std::string& problem, std::time_t when);

  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;
  ~RunStore();

  const std::filesystem::path& dir() const { return dir_; }
  std::string run_id() const { return dir_.filename().string(); }
  const nlohmann::json& config() const { return config_; }

  // What open() found (empty for a new run). Samples finished since are in is_finished().
  ResumeState resume() const;
  bool is_finished(int sample) const;

  // After every completed turn: replaces partial/sample-<i>.json atomically. Fills rewards
  // and best_turn on the stored copy, updates best.* and summary.json on a new best.
  // Throws std::logic_error for a sample already finished.
  void save_partial(const Trajectory& t);
  // The sample is done (status must not be Running): one line appended to
  // trajectories.jsonl with a single write and fsync, then its partial file removed,
  // best.* and summary.json updated. Throws std::logic_error when the sample is
  // already recorded, so a line is never duplicated.
  void finish_sample(const Trajectory& t);

  // Rewrites summary.json (done by the calls above; call at the end of a run too).
  void write_summary();

  std::optional<BestKernel> best() const;
  std::vector<SampleOutcome> outcomes() const;

 private:
  RunStore(std::filesystem::path dir, nlohmann::json config, Options opts);
  void open_append_locked();
  Trajectory scored(const Trajectory& t) const;
  void note_locked(const Trajectory& t);  // outcome + best
  void write_best_locked(const Trajectory& t, int turn);
  void write_summary_locked();
  std::filesystem::path partial_path(int sample) const;

  std::filesystem::path dir_;
  nlohmann::json config_;
  Options opts_;
  mutable std::mutex mu_;
  Fd append_fd_;
  ResumeState loaded_;
  std::map<int, SampleOutcome> outcomes_;
  std::map<int, bool> finished_;
  std::optional<BestKernel> best_;
  ProblemInfo problem_;
};

}  // namespace kagent::traj
