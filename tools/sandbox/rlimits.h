// Resource limits of the worker (setrlimit), process-wide and inherited by its children.
// Soft and hard limits are set equal: an unprivileged process cannot raise a hard limit,
// so a candidate cannot lift them (CPU time excepted: its soft limit moves per request
// under an unlimited hard one, so it is a backstop to the wall-clock watchdog, no more).
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <string>

namespace kagent::sandbox {

struct LimitResult {
  bool ok = false;
  std::string error;
};

// soft = hard = value.
LimitResult set_limit(int resource, uint64_t value);

// RLIMIT_FSIZE, with SIGXFSZ ignored so that a write past it fails with EFBIG instead of
// killing the worker.
LimitResult limit_file_size(uint64_t bytes);

// RLIMIT_NPROC at the tasks that count now plus `extra`: all of this uid's, or with
// `own_user_namespace` only this process's threads (the kernel counts per user namespace,
// and a fresh one holds nothing else). Returns the limit set in `limit`.
LimitResult limit_processes(int extra, bool own_user_namespace, uint64_t* limit = nullptr);

// RLIMIT_CPU soft limit at the CPU time used so far plus `seconds`: SIGXCPU ends the worker
// past it. disarm_cpu_time() lifts it again (to the hard limit).
LimitResult arm_cpu_time(int seconds);
LimitResult disarm_cpu_time();

}  // namespace kagent::sandbox
