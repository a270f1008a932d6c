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

// While alive, SIGINT cancels `token` (a second Ctrl-C kills the process as usual).
// The previous handler is restored on destruction. One guard at a time per process.
class ScopedSigintCancel {
 public:
  explicit ScopedSigintCancel(CancelToken& token);
  ~ScopedSigintCancel();
  ScopedSigintCancel(const ScopedSigintCancel&) = delete;
  ScopedSigintCancel& operator=(const ScopedSigintCancel&) = delete;
  bool interrupted() const;  // SIGINT arrived while the guard was alive

 private:
  alignas(8) unsigned char old_action_[256];
};

}  // namespace kagent::llm
