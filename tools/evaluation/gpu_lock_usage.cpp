#include "evaluation/gpu_lock_usage.h"

#include <algorithm>

namespace kagent {

GpuLockUsage::GpuLockUsage(size_t workers, clock::time_point start)
    : modes_(workers, LockMode::None), waiting_(workers, false), last_(start) {
  totals_.shared_by.assign(std::max<size_t>(workers, 1), 0.0);
}

void GpuLockUsage::add(GpuLockTotals& t, double dt) const {
  t.seconds += dt;
  const auto shared = static_cast<size_t>(std::count(modes_.begin(), modes_.end(), LockMode::Shared));
  if (std::find(modes_.begin(), modes_.end(), LockMode::Exclusive) != modes_.end()) {
    t.exclusive_seconds += dt;
  } else if (shared > 0) {
    t.shared_seconds += dt;
    t.shared_by[std::min(shared, t.shared_by.size()) - 1] += dt;
    if (std::find(waiting_.begin(), waiting_.end(), true) != waiting_.end()) t.draining_seconds += dt;
  } else {
    t.free_seconds += dt;
  }
}

double GpuLockUsage::since_last(clock::time_point at) const {
  // Lines of two workers may be read out of order: never negative time.
  return at > last_ ? std::chrono::duration<double>(at - last_).count() : 0.0;
}

void GpuLockUsage::set(size_t worker, LockMode mode, bool waiting, clock::time_point at) {
  std::lock_guard lock(mu_);
  if (worker >= modes_.size()) return;
  add(totals_, since_last(at));
  last_ = std::max(last_, at);
  modes_[worker] = waiting ? LockMode::None : mode;
  waiting_[worker] = waiting && mode == LockMode::Exclusive;
}

GpuLockTotals GpuLockUsage::totals(clock::time_point at) const {
  std::lock_guard lock(mu_);
  GpuLockTotals t = totals_;
  add(t, since_last(at));  // the current state's time so far
  return t;
}

}  // namespace kagent
