// Linux namespaces for the worker: its own network (no interface up, so no route to
// anywhere) and, where Landlock is missing, its own mount table with every mount
// read-only but the scratch folder and /dev/shm. Each call must run while the process
// has one thread: namespaces belong to threads, and only a single-threaded process
// moves as a whole.
#pragma once

#include <string>
#include <vector>

namespace kagent::sandbox {

struct NamespaceResult {
  bool ok = false;
  std::string error;                       // why not, when !ok
  std::vector<std::string> left_writable;  // mounts that stayed writable (read-only mount table only)
};

// For a non-root caller: a user namespace mapping its own uid and gid, which lets it make
// the other namespaces. Fails where unprivileged user namespaces are off.
NamespaceResult enter_user_namespace();

// unshare(CLONE_NEWNET): the new namespace has only a loopback device, down.
NamespaceResult enter_network_namespace();

// unshare(CLONE_NEWNS), mounts made private (nothing propagates back), every path in
// `writable` bind-mounted on itself, then every other mount remounted read-only (its other
// flags kept). ok only when no other mount stays writable.
NamespaceResult enter_read_only_mount_namespace(const std::vector<std::string>& writable);

// One line of /proc/self/mountinfo: the mount point (unescaped) and its per-mount options.
struct MountEntry {
  std::string mount_point;
  std::string options;  // e.g. "rw,nosuid,nodev,relatime"
};
std::vector<MountEntry> parse_mountinfo(const std::string& text);

}  // namespace kagent::sandbox
