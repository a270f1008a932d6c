// A process limit that holds for root: a cgroup of the worker's own under the pids controller
// (cgroup v2, or v1's pids hierarchy). The kernel refuses a fork or a thread past pids.max
// whoever asks, uid 0 included, where RLIMIT_NPROC exempts root; pids.events counts the
// refusals, which is how they are reported. CUDA does not mind a cgroup (measured on the H200:
// tests/gpu/RESULTS.md), unlike the namespaces and Landlock that its driver fails under there.
//
// Steps: the worker, still root and single-threaded, makes the group beside its own and moves
// itself in (enter_pids_cgroup) with no limit yet; once its runtime's threads run, the monitor
// (outside the sandbox, still root) sets pids.max to the tasks counted then plus the policy's
// allowance, and reads pids.events at the end of every request; when the worker has ended it
// removes the group. The monitor also refuses and records writes under /sys/fs/cgroup, so a
// candidate running as root cannot lift the limit or leave the group.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kagent::sandbox {

struct PidsCgroup {
  std::string dir;   // the group's folder, e.g. /sys/fs/cgroup/<parent>/kagent-worker-<pid>
  bool v2 = false;
};

struct PidsCgroupResult {
  std::optional<PidsCgroup> group;
  std::string error;  // why there is none
};

// Where this kernel's pids controller is mounted and this process's group in it, from
// /proc/self/mountinfo and /proc/self/cgroup (arguments: their text, for tests).
struct PidsHierarchy {
  std::string parent;  // the group to make the worker's in: this process's own, or (v2) the nearest ancestor that can have it
  bool v2 = false;
};
std::optional<PidsHierarchy> find_pids_hierarchy(const std::string& mountinfo, const std::string& cgroup,
                                                 std::string* error);

// Makes `<parent>/kagent-worker-<pid>` and moves `pid` (with its threads) in.
PidsCgroupResult enter_pids_cgroup(pid_t pid);

// pids.max = tasks in the group now + extra. Returns the limit, or nullopt with `error`.
std::optional<uint64_t> limit_pids(const PidsCgroup& group, int extra, std::string* error);

// The "max" count of pids.events: forks and threads refused at pids.max so far.
uint64_t pids_refusals(const PidsCgroup& group);

// After its worker ended, by the monitor or (where the monitor was killed with it) the
// orchestrator: kills what is left in the group `dir` (the hello report's "cgroup") and
// removes it once the kernel has reaped them.
void kill_and_remove_pids_cgroup(const std::string& dir);

}  // namespace kagent::sandbox
