#include "compiler/compile_pool.h"

#include <algorithm>

#include "common/cpu_affinity.h"

namespace kagent {

CompilePool::CompilePool(unsigned threads, std::size_t max_queued) {
  if (threads == 0) threads = usable_cpu_count();
  max_queued_ = max_queued ? max_queued : 4 * static_cast<std::size_t>(threads);
  workers_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { run(); });
}

CompilePool::~CompilePool() {
  std::deque<std::packaged_task<CompileInfo()>> dropped;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);  // destroyed unrun: their futures report broken_promise
  }
  has_work_.notify_all();
  has_room_.notify_all();
  workers_.clear();  // joins; running compiles finish first
}

std::future<CompileInfo> CompilePool::submit(ProblemSpec spec, std::string source, CompileOptions options) {
  std::packaged_task<CompileInfo()> task(
      [spec = std::move(spec), source = std::move(source), options = std::move(options)] {
        return compile_native(spec, source, options);
      });
  auto fut = task.get_future();
  {
    std::unique_lock lock(mu_);
    has_room_.wait(lock, [&] { return stopping_ || queue_.size() < max_queued_; });
    if (stopping_) return fut;  // task dies here: broken_promise
    queue_.push_back(std::move(task));
  }
  has_work_.notify_one();
  return fut;
}

std::size_t CompilePool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void CompilePool::run() {
  for (;;) {
    std::packaged_task<CompileInfo()> task;
    {
      std::unique_lock lock(mu_);
      has_work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    has_room_.notify_one();
    task();  // exceptions land in the future
  }
}

}  // namespace kagent
