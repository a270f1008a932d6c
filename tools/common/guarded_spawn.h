// Starting a program under a guard: a small forked process that leads the program's process
// group, applies resource limits to the program (inherited by every process it starts) and
// SIGKILLs the whole group when the thread that started it dies. nvcc's children (cicc,
// cudafe++, cc1plus, ptxas, ld) get no parent-death signal of their own and would outlive a
// killed kagent; the guard is what takes them down. A guard that dies with its parent, and its
// program, ignore the stop signals (stop_signals.h): kagent decides a stop and SIGKILLs the group.
#pragma once

#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace kagent {

// Everything the guard and the program need, prepared before fork: between fork and exec only
// async-signal-safe calls are allowed, so nothing here may allocate.
struct GuardedChild {
  const char* path = nullptr;          // the program, already resolved (no PATH search after fork)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;           // nullptr: keep ours
  bool stdin_null = true;
  const char* output_file = nullptr;   // stdout+stderr appended here, else to output_fd
  int output_fd = -1;
  int request_fd = -1;                 // becomes the program's fd 3 when >= 0
  int reply_fd = -1;                   // becomes the program's fd 4 when >= 0
  std::optional<rlim_t> address_space; // RLIMIT_AS for the program and its children
  bool die_with_parent = true;         // the group dies with the spawning thread
  int nice = 0;                        // added to the program's niceness (inherited by its children)
  bool idle_priority = false;          // SCHED_IDLE for the program and its children
  std::optional<cpu_set_t> cpus;       // the program's (and its children's) cores; nullopt: ours
};

// Starts the guard and, under it, the program. Returns the guard's pid, which is also the
// process group id; the guard exits the way the program did (same code, same signal), so
// waiting for the guard is waiting for the program. Throws std::system_error when the
// program cannot be executed (its errno).
//
// The parent-death signal belongs to the thread that calls this, not to the process: call it
// from a thread that outlives the child (one that waits for it).
pid_t spawn_guarded(const GuardedChild& child);

// `name` looked up in PATH as execvp would; `name` itself when it contains a slash or is not found.
// (Done before fork, so the child only calls execve.)
std::string resolve_in_path(const std::string& name);

}  // namespace kagent
