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
// CLONE_THREAD) and opens for writing go to a supervisor (ViolationMonitor) through
// seccomp user notification, which records them and answers.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "common/fd.h"

namespace kagent::sandbox {

struct FilterOptions {
  bool notify = true;
};

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
