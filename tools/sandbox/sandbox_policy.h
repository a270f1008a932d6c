// What the sandbox of the worker allows: limits and switches in one struct that the
// orchestrator and the worker share. The orchestrator passes it to the worker through the
// worker's environment (to_environment), the worker reads it back (from_environment).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kagent::sandbox {

// Names of the mechanisms, as `disabled` and the report spell them.
namespace mechanism {
inline constexpr const char* kNetNs = "netns";            // a network namespace with no interface up
inline constexpr const char* kSeccomp = "seccomp";        // the system call filter (sockets, mounts, namespaces)
inline constexpr const char* kNotify = "notify";          // violations reported through seccomp user notification
inline constexpr const char* kLandlock = "landlock";      // filesystem (and TCP) access rules of the kernel
inline constexpr const char* kMountNs = "mount_ns";       // a mount namespace with everything read-only but scratch
inline constexpr const char* kUid = "uid";                // root switches to an unprivileged uid
inline constexpr const char* kCgroupPids = "cgroup_pids";  // a pids cgroup of the worker's own (binds root too)
inline constexpr const char* kRlimitNproc = "rlimit_nproc";
inline constexpr const char* kRlimitData = "rlimit_data";
inline constexpr const char* kRlimitFsize = "rlimit_fsize";
inline constexpr const char* kRlimitCpu = "rlimit_cpu";
inline constexpr const char* kWatchdog = "watchdog";      // the orchestrator's RSS watchdog
}  // namespace mechanism

// The names of a comma-separated setting (KAGENT_SANDBOX_DISABLE, KAGENT_SANDBOX_REQUIRE),
// spaces around each trimmed, empty ones dropped.
std::vector<std::string_view> comma_separated(std::string_view list);

struct SandboxPolicy {
  bool enabled = true;
  // Host memory of the worker and its children (RSS, watched by the orchestrator);
  // RLIMIT_DATA sits a quarter above it as the kernel-side backstop.
  uint64_t memory_bytes = uint64_t{32} << 30;
  // Processes (and threads) the worker may add to those it runs when the sandbox closes.
  int processes = 64;
  uint64_t file_size_bytes = uint64_t{1} << 30;  // largest file it may write (RLIMIT_FSIZE)
  int cpu_seconds_per_request = 600;              // RLIMIT_CPU, re-armed per request: a backstop to the wall clock
  // In the worker: its scratch folder, the only writable one (made fresh when empty). In
  // WorkerClient: the folder it makes each worker's fresh scratch folder in (default: /tmp).
  std::string scratch;
  bool scratch_disposable = false;  // the worker's monitor deletes `scratch` when the worker ends
  // The process whose end ends the worker (its monitor watches it): the orchestrator, which a
  // SIGKILL may take down with no chance to stop its workers. 0: the worker's parent at start.
  pid_t orchestrator_pid = 0;
  // Root only: the uid to switch to (0: stay root, e.g. to keep GPU performance counters
  // where the driver restricts them to admins). Default: a uid of its own per worker.
  std::optional<uint32_t> uid;
  std::set<std::string, std::less<>> disabled;    // mechanism names to leave out (debugging, tests)

  bool allows(std::string_view mechanism) const { return enabled && !disabled.contains(mechanism); }

  // KAGENT_SANDBOX (on|off), KAGENT_SANDBOX_MEMORY_MB, KAGENT_SANDBOX_PROCESSES,
  // KAGENT_SANDBOX_FILE_SIZE_MB, KAGENT_SANDBOX_CPU_SECONDS, KAGENT_SANDBOX_SCRATCH,
  // KAGENT_SANDBOX_SCRATCH_DISPOSABLE (on|off), KAGENT_SANDBOX_ORCHESTRATOR_PID,
  // KAGENT_SANDBOX_UID, KAGENT_SANDBOX_DISABLE (comma-separated mechanism names).
  // Throws std::invalid_argument naming the variable when a value does not parse.
  static SandboxPolicy from_environment(const std::function<const char*(const char*)>& get_env);
  static SandboxPolicy from_environment();  // this process's environment
  // The same variables as "KEY=VALUE", every one of them, so the worker sees exactly this policy.
  std::vector<std::string> to_environment() const;
};

}  // namespace kagent::sandbox
