// Cancellation: a flag that transfers and backoff sleeps poll, and an RAII guard that
// makes Ctrl-C set it. Finished results are kept; only what is still running aborts.
#pragma once

#include <atomic>
#include <chrono>

namespace kagent::llm {

class CancelToken {
 public:
  void cancel() { flag_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_.load(std::memory_order_relaxed); }
  // Sleeps for d or until cancelled; returns false when cancelled.
  bool sleep_for(std::chrono::duration<double> d) const;

 private:
  std::atomic<bool> flag_{false};
};

// While alive, SIGINT (Ctrl-C) and SIGTERM (Slurm's time limit, scancel, a supervisor) cancel
// `token`, and `signalled` where given: a token that only a signal cancels, for what must tell a
// stop from outside apart from the run's own cancellation (a model failure ending the run). A
// second signal of the same kind kills the process as usual. The previous handlers are restored
// on destruction. One guard at a time per process.
class ScopedSignalCancel {
 public:
  explicit ScopedSignalCancel(CancelToken& token, CancelToken* signalled = nullptr);
  ~ScopedSignalCancel();
  ScopedSignalCancel(const ScopedSignalCancel&) = delete;
  ScopedSignalCancel& operator=(const ScopedSignalCancel&) = delete;
  bool interrupted() const;  // SIGINT or SIGTERM arrived while the guard was alive

 private:
  alignas(8) unsigned char old_int_[256];
  alignas(8) unsigned char old_term_[256];
};

}  // namespace kagent::llm
