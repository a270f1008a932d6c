// Child processes as RAII objects: a destroyed Subprocess has its whole process group
// killed and reaped, so no path through kagent leaks a worker or an nvcc. Commands that
// run_command waits for (compilers) also die with kagent when it is killed, and can carry
// an address-space limit (see guarded_spawn.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"

namespace kagent {

// How a child ended.
struct ExitInfo {
  bool exited = false;    // normal exit, see code
  int code = -1;
  bool signaled = false;  // killed by a signal, see signal
  int signal = 0;
  long peak_rss_kb = 0;   // largest resident set of the child or any descendant it waited for
  double cpu_seconds = 0; // user + system CPU time of the child and the descendants it waited for
  std::string describe() const;  // "exit 3", "signal 11 (Segmentation fault)"
};

struct SpawnOptions {
  std::vector<std::string> argv;               // argv[0] is looked up in PATH
  std::optional<std::string> cwd;
  std::vector<std::string> env_set;            // "KEY=VALUE" added to (or replacing in) this environment
  std::optional<std::string> output_file;      // stdout+stderr appended here; else captured in a pipe
  bool stdin_null = true;
  bool protocol_pipes = false;                 // child gets fd 3 (reads requests) and fd 4 (writes replies)
  std::optional<std::uint64_t> address_space_limit;  // bytes of RLIMIT_AS, for the program and all it starts
  // The whole process group is SIGKILLed when the spawning thread ends, kagent killed or
  // crashed included (a guard process leads the group, see guarded_spawn.h). Only for a
  // child that the spawning thread waits for: the signal follows the thread, not the process.
  bool die_with_parent = false;
  // Added to the program's niceness (0: unchanged). CPU work that must not take the CPU from a
  // worker that times on the GPU (compilers): the timed launches of a worker that waits for a
  // core are the candidate's time. Started under a guard, as die_with_parent is.
  int nice = 0;
  // The program and everything it starts run under SCHED_IDLE: a thread of normal priority that
  // wakes (a worker's timing thread after its launch completes) takes the core at once, where
  // nice 19 alone still lets the compiler finish its slice first. Best effort (an unprivileged
  // process may always lower its own policy); started under a guard, as nice is.
  bool idle_priority = false;
  // The cores the program and everything it starts may run on (empty: wherever this process
  // may): compilers kept off the cores left free for the workers (common/cpu_affinity.h).
  // Best effort; started under a guard, as die_with_parent is.
  std::vector<int> cpus;
};

class Subprocess {
 public:
  // Throws std::system_error when the program cannot be started.
  explicit Subprocess(const SpawnOptions& opts);
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  Subprocess(Subprocess&&) noexcept;
  Subprocess& operator=(Subprocess&&) noexcept;
  ~Subprocess();  // kills the process group (SIGKILL) if still running, then reaps

  pid_t pid() const { return pid_; }
  int output_fd() const { return output_.get(); }   // captured stdout+stderr (when no output_file)
  int request_fd() const { return request_.get(); } // parent writes here -> child's fd 3
  int reply_fd() const { return reply_.get(); }     // parent reads here <- child's fd 4

  // Non-blocking check; returns the exit once the child has ended.
  std::optional<ExitInfo> poll();
  // Waits up to `timeout` (forever when nullopt).
  std::optional<ExitInfo> wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // SIGKILL to the whole process group, then reap.
  ExitInfo kill();
  bool running();

 private:
  void release_all() noexcept;
  void spawn_with_guard(const SpawnOptions& opts);
  pid_t pid_ = -1;
  std::optional<ExitInfo> exit_;
  Fd output_, request_, reply_;
};

struct RunResult {
  ExitInfo exit;
  bool timed_out = false;
  std::string output;   // stdout and stderr, interleaved as written
  double seconds = 0;
  // Ran to the end and exited 0.
  bool succeeded() const { return !timed_out && exit.exited && exit.code == 0; }
};

// Runs a command to completion, capturing its output; kills it (its process group) after
// `timeout`. The command always dies with the calling thread (die_with_parent).
RunResult run_command(const SpawnOptions& opts, std::chrono::milliseconds timeout);

}  // namespace kagent
