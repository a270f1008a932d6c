// The violation monitor: a small process that stays outside the sandbox, parent of the
// sandboxed worker. The worker's seccomp filter sends it (through seccomp user
// notification) every socket it refuses, every process it starts and every file it opens
// for writing; the monitor answers each one:
//   - a socket of a network family: refused (EACCES) and recorded;
//   - a new process: allowed while fewer than `process_limit` of the worker's processes
//     live and RLIMIT_NPROC leaves room for one more task, else refused (EAGAIN) and
//     recorded (so a refusal never depends on how many threads the worker happens to run);
//   - an open for writing, or a change of the file tree (mkdir, unlink, rename, link,
//     symlink, truncate, mknod, chmod, chown), outside the scratch folder, /dev/shm and the
//     device files, with the folder resolved through symlinks: refused (EACCES) and recorded
//     (/proc and /sys writes, e.g. thread names, pass to the kernel's own checks unrecorded).
// Recording is what turns "blocked" into a verdict the model sees. The kernel mechanisms
// (netns, Landlock, rlimits) enforce on their own; where they are missing the monitor's
// refusals are the last layer (weaker: a path in memory can change after it was read).
// Being the parent, the monitor also reaps what the worker leaves behind, kills the
// processes a candidate left running when a request ends, and, when the worker dies,
// dies the same way (same signal or exit code) so the orchestrator's crash classification
// sees the worker's own end. When the orchestrator ends (a SIGKILL included) it kills the
// worker and its processes, removes the scratch folder and its cgroup, and dies. The caller
// blocks SIGCHLD before forking the worker, so that no death goes unseen.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fd.h"

namespace kagent::sandbox {

struct Violations {
  int network = 0;
  int filesystem = 0;
  int processes = 0;
  std::vector<std::string> details;  // first few, human-readable ("socket(AF_INET)", "open /etc/x for writing")
  std::vector<pid_t> killed;         // processes left running that the monitor killed
  bool any() const { return network + filesystem + processes > 0; }
};
void to_json(nlohmann::json& j, const Violations& v);
void from_json(const nlohmann::json& j, Violations& v);

struct MonitorRules {
  std::vector<std::string> writable;  // folders writes may go to (scratch, /dev/shm), resolved paths
  int process_limit = 64;             // live processes of the worker (itself not counted)
  std::string remove_at_end;          // a folder to delete once the worker has ended (its own scratch)
  // The orchestrator: when it ends (a SIGKILL gives it no chance to stop its workers) the
  // monitor kills the worker and cleans up, so a worker busy in a candidate does not outlive it.
  pid_t orchestrator = 0;
};

enum class WriteVerdict { Allowed, Unrecorded, Violation };
// What the monitor makes of an open for writing of `path` (absolute, normalized).
WriteVerdict classify_write(const std::string& path, const MonitorRules& rules);

// "/a/./b/../c" -> "/a/c"; `path` relative to `base` (absolute) unless it starts with '/'.
std::string normalize_path(const std::string& base, const std::string& path);

// The monitor's side: runs until `worker` ends, then ends the same way. Never returns.
// `channel` is its end of a SOCK_SEQPACKET socketpair with the worker.
[[noreturn]] void run_monitor(pid_t worker, Fd channel, const MonitorRules& rules);

// The worker's side of the channel.
class MonitorChannel {
 public:
  explicit MonitorChannel(Fd channel) : channel_(std::move(channel)) {}
  // Hands the seccomp listener over (and closes it here: a candidate in this process must
  // not answer its own notifications); -1 when there is none.
  bool send_listener(int listener);
  // The worker's pids cgroup (cgroup_pids.h), named once before candidates run; then its
  // limit: the tasks in it plus `extra`, set by the monitor (root, outside the sandbox).
  bool send_cgroup(const std::string& dir);
  std::optional<uint64_t> limit_cgroup(int extra, std::string* error);
  // Ends a request: the monitor kills the processes still running below the worker and
  // returns what it recorded since the last call; the killed direct children are reaped here.
  Violations end_request();
  // What the monitor recorded since the last answer, nothing killed (a request's start).
  Violations take();

 private:
  Violations ask(const char* message);  // sends `message`, returns the monitor's answer
  Fd channel_;
};

}  // namespace kagent::sandbox
