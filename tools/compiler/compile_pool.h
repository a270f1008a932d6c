// A fixed set of threads compiling native candidates concurrently. nvcc is mostly
// single-threaded, so one thread per core keeps the machine busy; the queue is bounded
// so a producer (many LLM samples) cannot pile up unbounded work.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "compiler/native_compiler.h"

namespace kagent {

class CompilePool {
 public:
  // threads 0: one per core this process may use (usable_cpu_count). max_queued 0: 4 x threads (waiting, not running).
  explicit CompilePool(unsigned threads = 0, std::size_t max_queued = 0);
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;
  // Running compiles finish; queued ones are dropped, their futures get broken_promise.
  ~CompilePool();

  // Blocks while the queue is full. The future carries compile_native's result (or an
  // exception it threw).
  std::future<CompileInfo> submit(ProblemSpec spec, std::string source, CompileOptions options);

  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }
  std::size_t queued() const;

 private:
  void run();

  std::size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable has_work_, has_room_;
  std::deque<std::packaged_task<CompileInfo()>> queue_;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;
};

}  // namespace kagent
