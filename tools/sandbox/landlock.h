// Landlock: the kernel's own filesystem (and, from ABI 4, TCP) access rules for an
// unprivileged process, which even root cannot lift once applied. The worker reads
// everywhere, executes everywhere (nvcc, ptxas), writes only beneath its scratch folder and
// /dev/shm, and opens the device files CUDA needs read-write. The rules bind the calling
// thread and the threads and processes it starts later: apply while single-threaded.
#pragma once

#include <string>
#include <vector>

namespace kagent::sandbox {

struct LandlockRules {
  std::vector<std::string> writable_dirs;  // everything allowed beneath
  std::vector<std::string> devices;        // device files (or folders of them): read, write, ioctl
  bool restrict_tcp = true;                // ABI >= 4: no TCP bind or connect at all
  bool restrict_scope = true;              // ABI >= 6: no signals or abstract sockets to outside processes
};

struct LandlockResult {
  bool ok = false;
  int abi = 0;                        // the kernel's Landlock ABI version; 0 when none
  std::string error;                  // why not, when !ok
  bool tcp_restricted = false;
  bool scoped = false;
  std::vector<std::string> missing;   // rule paths that do not exist here (skipped)
};

// The ABI version, or 0 with the reason in `why_not` (not built in, disabled at boot).
int landlock_abi(std::string* why_not = nullptr);

// Requires no_new_privs (prctl PR_SET_NO_NEW_PRIVS) unless the caller has CAP_SYS_ADMIN.
LandlockResult apply_landlock(const LandlockRules& rules);

// The NVIDIA device files present: /dev/nvidia*, /dev/nvidia-caps.
std::vector<std::string> nvidia_device_paths();

}  // namespace kagent::sandbox
