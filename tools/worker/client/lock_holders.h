// Who holds the GPU's timing lock (worker/protocol/gpu_timing_lock.h), as the kernel lists
// it: the orchestrator looks while its worker waits for the lock, so that a wait never outlasts
// the holder it waits for.
//
//   /proc/locks           every lock with the pid that took it, and the requests blocked on it
//                         ("->"); a flock belongs to an open file description, which fork
//                         shares, so the pid that took a lock may have exited while processes it
//                         forked keep the description, and the lock, for good
//   /proc/<pid>/fdinfo/N  the locks held through that descriptor ("lock:" lines): which
//                         processes keep such an orphaned lock
//
// LockWatch is the orchestrator's policy while its worker waits (worker_client.cpp): an
// orphaned lock's keepers are killed when they are forks of the worker binary (what a candidate
// forked and left running: nothing else may keep the timing lock); a holder that has held the
// lock longer than any request may run (its own client would have killed it) ends the wait; a
// long wait names its holders once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kagent {

struct FileLockEntry {
  pid_t pid = 0;           // the process that took it (or waits for it)
  bool exclusive = false;  // WRITE (flock LOCK_EX) rather than READ
  bool waiting = false;    // a blocked request ("->"), not a held lock
};

// The entries of a /proc/locks (or fdinfo "lock:") text that are on the file with inode `ino`.
std::vector<FileLockEntry> parse_file_locks(const std::string& text, ino_t ino);
// The locks on `path` now, held and waited for; empty when it cannot be read.
std::vector<FileLockEntry> file_locks(const std::string& path);

// Processes that keep a lock on `path` that was taken by a process that has exited (its
// descriptor inherited by fork): pid -> the exited pid that took it.
std::map<pid_t, pid_t> orphan_lock_keepers(const std::string& path);

// "pid 42 (kagent-worker, state S, in flock_lock_inode_wait)": what a notice names.
std::string describe_lock_holder(pid_t pid);

class LockWatch {
 public:
  struct Options {
    std::chrono::milliseconds holder_limit{600'000};  // longer than any request may run
    std::chrono::milliseconds notice_after{60'000};   // a wait this long names its holders once
    std::string worker_path;                          // keepers killed only if forks of this binary
    std::chrono::milliseconds every{1'000};           // how often /proc is read
  };
  LockWatch(std::vector<std::string> paths, Options options);

  struct Look {
    std::vector<std::string> notices;  // what the user should hear (said once each)
    std::optional<std::string> give_up;  // why the wait ends: the holder outlasted any request
  };
  // Called while the worker waits for the lock (at most `every` apart in effect).
  Look look(double waited_s);

 private:
  std::vector<std::string> paths_;
  Options opts_;
  std::chrono::steady_clock::time_point last_{};
  std::map<pid_t, std::chrono::steady_clock::time_point> holding_since_;
  bool named_ = false;
};

}  // namespace kagent
