// Who the sandboxed worker runs as. A root worker switches to an unprivileged uid of its own,
// so RLIMIT_NPROC binds it (the kernel exempts uid 0) and it loses root's power over files,
// devices and other processes; it keeps CAP_DAC_READ_SEARCH only, so files it could read
// before (a Python under /root, the compile cache) stay readable. Call while single-threaded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kagent::sandbox {

struct CredentialResult {
  bool ok = false;
  std::string error;
  std::string note = {};  // with ok: what did not work but does not matter much (ambient capabilities)
};

// Is `id` inside one of the ranges of a /proc/self/{uid,gid}_map text?
bool id_mapped(uint32_t id, const std::string& map_text);

// The uid to switch to when none is configured: 1'000'000'000 + pid (unique per worker, so
// RLIMIT_NPROC counts this worker alone and its processes can be found and killed by uid)
// where the user namespace maps it, else 65534 (nobody). nullopt when neither is mapped.
std::optional<uint32_t> default_sandbox_uid(pid_t pid, const std::string& uid_map, const std::string& gid_map);
inline constexpr uint32_t kUniqueUidBase = 1'000'000'000;

// Supplementary groups that keep `devices` readable and writable for an unprivileged uid:
// the group of each device that is not world read-write but group read-write. Devices open
// to neither are listed in `unreachable`.
std::vector<gid_t> device_groups(const std::vector<std::string>& devices, std::vector<std::string>* unreachable);

// Capabilities kept across the switch, as CAP_* numbers.
struct CapabilitySet {
  std::vector<int> keep;
};

// Root only: bounding set cut to `caps`, groups, gid and uid switched, `caps` kept effective,
// permitted, inheritable and ambient (children such as nvcc keep them too), dumpable set
// again (so the orchestrator and the violation monitor can read /proc/<pid>).
CredentialResult switch_user(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const CapabilitySet& caps);

// Staying root (or root of a user namespace): every capability but `caps` dropped for good.
CredentialResult limit_capabilities(const CapabilitySet& caps);

// Tries switch_user in a forked child first: the child checks that every path in `readable`
// opens for reading, every device in `devices` opens read-write and `scratch` takes a file.
// A failure names the first path that broke. The parent is unchanged.
CredentialResult probe_switch_user(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const CapabilitySet& caps,
                                   const std::vector<std::string>& readable, const std::vector<std::string>& devices,
                                   const std::string& scratch);

// chown of every folder in `paths` (made by the worker) to the sandbox's uid and gid.
CredentialResult give_folders(const std::vector<std::string>& paths, uid_t uid, gid_t gid);

}  // namespace kagent::sandbox
