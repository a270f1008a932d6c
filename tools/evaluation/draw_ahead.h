// DrawAhead: one process per evaluation pool that makes the correctness trials' CPU draws of the
// problems the pool is about to evaluate, ahead of the workers (kagent_worker/draw_ahead.py).
//
// KernelBench draws a trial's inputs on the CPU from its seed, seconds of torch's generator for
// a large problem, and a worker did it inside every evaluation while answers queued for it. The
// pool now names a problem as its answer enters the pipeline (before its compile), this process
// draws the trials into a folder, and the worker reads them from there (KAGENT_DRAW_DIR). Each
// problem text is drawn once per pool instead of once per worker that meets it. The numbers are
// the worker's own: the same file, seeds and torch. A worker that finds no draw makes it itself,
// so nothing depends on this process being there or being ahead.
//
// The process runs problem files: it runs under the workers' sandbox, the folder being its
// scratch folder (the workers read it; only it writes there). It dies with the pool (its
// sandbox monitor watches this process), and draws no more than `budget_bytes` ahead: the pool
// lets go of a problem's draws when its last evaluation in flight ends: kept until their room is
// needed, so that the next turn or request of the problem takes them again.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent {

class JsonLineReader;

// How many draw processes (KAGENT_DRAW_AHEAD: a count; 0 turns them off and the workers draw, as
// before). One by default: over the leaderboard on one H200 host (bench/realworld/RESULTS.md),
// one process gave 89.6 answers a minute against 83.7 without, two gave 92.2 against 96.1: the
// host was short of cores in mid-run, and a second process added its CPU there (+54 s against
// +34 s). A host with cores to spare, or a collection whose large problems all come at once,
// may want 2.
inline constexpr int kDefaultDrawProcesses = 1;
inline constexpr const char* kDrawAheadEnv = "KAGENT_DRAW_AHEAD";
// Unset or empty: the default; a whole number from 0 to 16; nullopt for anything else (kagent's
// command line refuses it before anything starts: agent/cli/environment_settings.h).
std::optional<int> parse_draw_processes(const char* text);
int draw_processes();  // this process's setting, the default where it does not parse
// The variable that gives the workers the folders to read (kagent_worker/draw_files.py).
inline constexpr const char* kDrawDirEnv = "KAGENT_DRAW_DIR";
struct DrawAheadOptions {
  std::string worker_path;             // kagent-worker (its --draw-ahead mode)
  std::vector<std::string> env;        // KEY=VALUE for it (the workers' thread settings)
  int64_t seed = 42;                   // the evaluations' seed and trials (EvalOptions)
  int trials = 5;
  int processes = kDefaultDrawProcesses;
  uint64_t budget_bytes = 0;           // drawn and kept on disk, at most, over all the processes;
                                       // 0: default_draw_budget_bytes()
  // A process with draws asked and no answer for this long (not waiting for room) is stuck in
  // a problem's get_inputs(): it is killed and the workers draw for themselves.
  std::chrono::milliseconds stuck_after{std::chrono::seconds(300)};
};

// An eighth of the machine's memory, at most 16 GiB.
uint64_t default_draw_budget_bytes();

struct DrawAheadCounters {
  int64_t asked = 0;      // problems named (first use while none of its evaluations is in flight)
  int64_t drawn = 0;      // problems whose trials were drawn
  int64_t kept = 0;       // problems asked again while their draws were still kept (nothing drawn)
  int64_t skipped = 0;    // problems the drawer left to the workers (inputs on the GPU, not shareable)
  double seconds = 0;     // the drawer's seconds drawing
  int64_t bytes = 0;      // bytes written
  int running = 0;        // draw processes up now (started and ready)
  std::string ended;      // how the last one that ended did, when one did while the pool ran
};

class DrawAhead {
 public:
  // Makes a folder per process and starts each on a thread of its own (a process dies with its
  // thread). Never throws for a drawer that cannot start: it says why on stderr, once, and the
  // workers draw for themselves.
  explicit DrawAhead(DrawAheadOptions options);
  ~DrawAhead();  // kills the processes, removes their folders
  DrawAhead(const DrawAhead&) = delete;
  DrawAhead& operator=(const DrawAhead&) = delete;

  // The folders the workers read, ':'-separated (their KAGENT_DRAW_DIR); empty: none.
  const std::string& folder() const { return folders_; }

  // An evaluation of `problem` (an absolute path) is coming: its draws are made unless already
  // there, by the process with the fewest draws outstanding. Pair each with a done(problem): with
  // none in flight the draws are no longer in use, kept until their room is needed (the next
  // evaluation of the problem takes them again).
  void want(const std::string& problem);
  void done(const std::string& problem);

  // Holds a want() for its lifetime.
  class Ticket {
   public:
    Ticket(DrawAhead* draw, std::string problem);
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    DrawAhead* draw_;
    std::string problem_;
  };

  DrawAheadCounters counters() const;

 private:
  struct Drawer {
    std::string folder;
    std::vector<nlohmann::json> outbox;  // requests not yet written
    int outstanding = 0;              // draws asked and not yet answered
    bool waiting_for_room = false;    // it said so: its budget is full until a drop
    bool running = false;             // said it is ready
    bool gone = false;                // ended or killed: asked nothing more
    std::atomic<pid_t> pid{-1};
    std::thread thread;
  };
  void run(Drawer& d);  // its thread: starts the process, writes the requests, reads the replies
  // Reads the replies there are (counters, progress); false once the process closed its end.
  bool read_replies(Drawer& d, JsonLineReader& reader, std::chrono::steady_clock::time_point& progress);
  DrawAheadOptions options_;
  std::vector<std::unique_ptr<Drawer>> drawers_;
  std::string folders_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  struct InFlight {
    int evaluations = 0;  // that named the problem and are not done
    size_t drawer = 0;    // the one asked to draw it
  };
  std::map<std::string, InFlight> in_flight_;
  DrawAheadCounters counters_;
  bool stop_ = false;
};

}  // namespace kagent
