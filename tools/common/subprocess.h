// Child processes as RAII objects: a destroyed Subprocess has its whole process group
// killed and reaped, so no path through kagent leaks a worker or an nvcc.
#pragma once

#include <sys/types.h>

#include <chrono>
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
  std::string describe() const;  // "exit 3", "signal 11 (Segmentation fault)"
};

struct SpawnOptions {
  std::vector<std::string> argv;               // argv[0] is looked up in PATH
  std::optional<std::string> cwd;
  std::vector<std::string> env_set;            // "KEY=VALUE" added to (or replacing in) this environment
  std::optional<std::string> output_file;      // stdout+stderr appended here; else captured in a pipe
  bool stdin_null = true;
  bool protocol_pipes = false;                 // child gets fd 3 (reads requests) and fd 4 (writes replies)
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
  pid_t pid_ = -1;
  std::optional<ExitInfo> exit_;
  Fd output_, request_, reply_;
};

struct RunResult {
  ExitInfo exit;
  bool timed_out = false;
  std::string output;   // stdout and stderr, interleaved as written
  double seconds = 0;
};

// Runs a command to completion, capturing its output; kills it after `timeout`.
RunResult run_command(const SpawnOptions& opts, std::chrono::milliseconds timeout);

}  // namespace kagent
