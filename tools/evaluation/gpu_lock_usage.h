// How one GPU's timing lock (worker/protocol/gpu_timing_lock.h) was held by this process's
// workers over time, from the lock lines they send: the seconds a worker held it exclusively (a
// timing, a baseline, a profile), the seconds it was shared by 1, 2, ... workers with none
// exclusive (loads, correctness, guards), and the seconds nobody held it. Exclusive plus shared
// is the GPU's busy time as kagent used it, which is what bounds a collection's rate once the
// workers are fed; the time a worker waited to time while others held it shared is the cost of
// draining them ("draining"). Pure C++, fed by WorkerClient's lock observer; thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

#include "worker/protocol/gpu_timing_lock.h"

namespace kagent {

struct GpuLockTotals {
  double seconds = 0;             // since the usage began
  double exclusive_seconds = 0;   // a worker held it exclusively
  double shared_seconds = 0;      // shared by at least one worker, none exclusive
  std::vector<double> shared_by;  // [k]: shared by exactly k+1 workers
  double free_seconds = 0;        // nobody held it
  double draining_seconds = 0;    // shared, while a worker waited to hold it exclusively
};

class GpuLockUsage {
 public:
  using clock = std::chrono::steady_clock;
  explicit GpuLockUsage(size_t workers, clock::time_point start = clock::now());

  // Worker `worker` now holds the lock in `mode`; `waiting`: it waits for `mode` (holding nothing
  // meanwhile, as a flock conversion lets go first). A worker that exits holds nothing.
  void set(size_t worker, LockMode mode, bool waiting, clock::time_point at = clock::now());
  GpuLockTotals totals(clock::time_point at = clock::now()) const;

 private:
  // Adds `dt` seconds of the current modes to `t`; the seconds since the last change.
  void add(GpuLockTotals& t, double dt) const;
  double since_last(clock::time_point at) const;
  mutable std::mutex mu_;
  std::vector<LockMode> modes_;
  std::vector<bool> waiting_;
  clock::time_point last_;
  GpuLockTotals totals_;
};

}  // namespace kagent
