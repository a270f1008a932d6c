// Who else uses a GPU while kagent times on it, and at what SM clock: NVML, asked by the
// orchestrator (it sees every process of the machine; the sandboxed worker does not).
// libnvidia-ml.so.1 is loaded at run time, so kagent also runs where no driver is installed
// (it then knows nothing, and says so: GpuContention::known stays false).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "result/eval_result.h"

namespace kagent {

class GpuWatch {
 public:
  // The GPU with this NVML UUID ("GPU-5c0f..."); null when NVML or the GPU cannot be had.
  static std::unique_ptr<GpuWatch> open(const std::string& uuid);
  // The UUIDs of every GPU of the machine (empty without NVML): the timing lock files are made
  // before a worker starts, when its GPU's UUID is not known yet.
  static std::vector<std::string> machine_uuids();
  ~GpuWatch();
  GpuWatch(const GpuWatch&) = delete;
  GpuWatch& operator=(const GpuWatch&) = delete;

  // Processes on the GPU other than `own` (kagent's worker and its children), as
  // "pid 4242 (python3)"; nullopt when NVML did not answer.
  std::optional<std::vector<std::string>> others(const std::set<pid_t>& own) const;
  // The same as pids.
  std::optional<std::vector<pid_t>> other_pids(const std::set<pid_t>& own) const;
  std::optional<int> sm_clock_mhz() const;
  // Every process on the GPU with the GPU memory it holds, in bytes (NVML's count, which
  // includes each process's CUDA context); nullopt when NVML did not answer.
  std::optional<std::vector<std::pair<pid_t, uint64_t>>> process_memory() const;

 private:
  struct Nvml;
  explicit GpuWatch(std::unique_ptr<Nvml> nvml);
  std::unique_ptr<Nvml> nvml_;
};

// "pid 4242 (python3)": a process as GpuContention names it.
std::string describe_process(pid_t pid);

// Collects what a GpuWatch sees over one measurement into a GpuContention.
//
// With the GPU's timing lock (`timing_lock`: the file the worker takes, gpu_timing_lock.h) the
// worker times only while it holds the lock exclusively, and says when (exclusive()): the GPU is
// looked at then only, and a process that has the lock file open (a sibling worker, of this
// kagent or another) is no contention then: it cannot run on the GPU before the lock is let go.
// Any other process is. Without the lock, every look counts every other process.
class ContentionRecorder {
 public:
  explicit ContentionRecorder(const GpuWatch* watch, std::string timing_lock = {})
      : watch_(watch), timing_lock_(std::move(timing_lock)) {}
  void start(const std::set<pid_t>& own);   // the SM clock before, a first look
  void look(const std::set<pid_t>& own);    // during
  GpuContention finish(const std::set<pid_t>& own);  // a last look, the SM clock after
  // The worker now holds (true) or no longer holds the timing lock exclusively: a look either way.
  void exclusive(bool held, const std::set<pid_t>& own);
  // The worker's lock broke: from now on, looked at as without one.
  void lock_broken() { timing_lock_.clear(); }

 private:
  const GpuWatch* watch_;
  std::string timing_lock_;
  bool exclusive_ = false;
  GpuContention c_;
};

}  // namespace kagent
