// The worker's system call filter, written as classic BPF by hand (no libseccomp: its
// headers are not on the GPU machines). It refuses, for the worker and every process it
// starts:
//   - sockets of any family but AF_UNIX (CUDA's driver talks over those) and AF_NETLINK
//     (glibc asks it about interfaces): EACCES;
//   - new namespaces (unshare, setns, clone with CLONE_NEW*), mounts, io_uring (it would
//     open sockets around this filter), ptrace and writes into other processes, kernel
//     modules, kexec, bpf, clocks, swap, reboot: EPERM;
//   - clone3 and openat2, whose arguments sit in memory the filter cannot read: ENOSYS,
//     on which glibc falls back to clone and openat;
//   - other architectures' system call tables (x32, int 0x80): ENOSYS.
// With `notify`, socket refusals, process creation (fork, vfork, clone without
// CLONE_THREAD), opens for writing and the calls that change the file tree (mkdir, unlink,
// rename, link, symlink, truncate, mknod, chmod, chown: watched_path_calls) go to a supervisor
// (ViolationMonitor) through seccomp user notification, which records them and answers: an
// attempt the kernel's own layers would refuse silently (Landlock, the uid) is then reported.
#pragma once

#include <linux/filter.h>

#include <string>
#include <utility>
#include <vector>

#include "common/fd.h"

namespace kagent::sandbox {

struct FilterOptions {
  bool notify = true;
};

// A system call that changes the file tree at the paths in some of its arguments.
struct PathCall {
  long nr;
  const char* verb;  // for the monitor's record: "mkdir", "rename", ...
  // (path argument, its directory fd argument or -1 for the working directory)
  std::vector<std::pair<int, int>> paths;
};
const std::vector<PathCall>& watched_path_calls();
// The entry for `nr`, or null.
const PathCall* watched_path_call(long nr);

// Empty on an architecture the filter does not know (it knows x86_64 and aarch64).
std::vector<sock_filter> build_filter(const FilterOptions& options);

// Does this kernel offer SECCOMP_RET_USER_NOTIF?
bool user_notification_available();

struct InstallResult {
  bool ok = false;
  Fd listener;  // with want_listener: the notification fd
  std::string error;
};

// Installs the filter on the calling thread and everything it starts later; needs
// no_new_privs (or CAP_SYS_ADMIN). Cannot be undone.
InstallResult install_filter(const std::vector<sock_filter>& program, bool want_listener);

}  // namespace kagent::sandbox
