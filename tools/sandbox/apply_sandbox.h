// The sandbox around a worker, put together from the mechanisms this kernel offers, with a
// report of which one holds each property (the worker's hello carries it):
//   network:     netns (a network namespace)   > seccomp (socket families refused)  > none
//   filesystem:  landlock > mount_ns (read-only mount table) > uid (an unprivileged uid) > none
//   processes:   cgroup_pids (binds root) > rlimit_nproc (under an unprivileged uid) > seccomp_notify (the monitor) > none
//   memory:      rlimit_data here, the orchestrator's RSS watchdog on top
//   file_size:   rlimit_fsize;  cpu_time: rlimit_cpu per request
// A mechanism that is missing or fails is reported with why, and the next one is tried;
// the worker starts in any case.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/cgroup_pids.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/scratch_dir.h"
#include "sandbox/violation_monitor.h"

namespace kagent::sandbox {

struct EnterOptions {
  std::vector<std::string> readable;  // files the worker must still read after switching uid (its Python)
};

class Sandbox {
 public:
  // Step 1, first in main while the process has one thread (namespaces, Landlock and the
  // uid switch only take the whole process then): the violation monitor forks off (this
  // call does not return in it), then namespaces, Landlock, the uid and the seccomp filter
  // close around this process and everything it starts. Throws std::system_error when the
  // scratch folder cannot be made.
  static std::unique_ptr<Sandbox> enter(const SandboxPolicy& policy, const EnterOptions& options = {});

  // Step 2, once the interpreter, torch and CUDA have started (their address-space
  // reservations and thread pools exist): RLIMIT_DATA, RLIMIT_FSIZE, RLIMIT_NPROC, no cores.
  void limit_resources();

  // Right after enter, where no monitor watches kagent (notify unavailable or disabled, or the
  // sandbox off): a thread of this process does. A worker busy in a candidate reads no request and would
  // not see kagent's pipes close; when kagent ends, even by SIGKILL, this process kills what it
  // started, and a janitor it forks then kills the process and empties its scratch folder once
  // no thread of it is left to write there.
  void watch_orchestrator();

  // Where the worker finds kagent gone before the watcher does (its request pipe at end-of-file,
  // its reply pipe broken): the watcher's way out at once, not a return that empties the folder
  // while a candidate's thread may still write there. Returns where kagent is there, or a
  // monitor does all this.
  void leave_if_orchestrator_gone() const;

  // Around each request: arms the CPU-time limit and returns what was refused since the last
  // end (by something a candidate left behind: never the coming request's); then disarms it,
  // kills processes a candidate left running and returns the violations recorded meanwhile.
  Violations begin_request();
  Violations end_request();

  // Empties the scratch folder this process made for itself (the monitor removes it, where there is one).
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const nlohmann::json& report() const { return report_; }
  const SandboxPolicy& policy() const { return policy_; }

 private:
  explicit Sandbox(SandboxPolicy policy) : policy_(std::move(policy)) {}
  void note(std::string text) { report_["notes"].push_back(std::move(text)); }

  SandboxPolicy policy_;
  nlohmann::json report_;
  std::optional<ScratchDir> scratch_;
  std::optional<MonitorChannel> monitor_;
  std::optional<PidsCgroup> cgroup_;  // the worker's pids cgroup, where one could be made
  uint64_t cgroup_refused_ = 0;       // pids.events' count already reported (no monitor)
  pid_t monitor_pid_ = -1;
  pid_t orchestrator_ = -1;  // kagent: this process's parent where no monitor stands between
  bool notify_ = false;
  bool unprivileged_ = false;       // RLIMIT_NPROC binds this process
  bool own_user_namespace_ = false;  // it counts this process's tasks alone
  std::string remove_at_exit_;
};

}  // namespace kagent::sandbox
