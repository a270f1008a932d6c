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
  ~GpuWatch();
  GpuWatch(const GpuWatch&) = delete;
  GpuWatch& operator=(const GpuWatch&) = delete;

  // Processes on the GPU other than `own` (kagent's worker and its children), as
  // "pid 4242 (python3)"; nullopt when NVML did not answer.
  std::optional<std::vector<std::string>> others(const std::set<pid_t>& own) const;
  std::optional<int> sm_clock_mhz() const;
  // Every process on the GPU with the GPU memory it holds, in bytes (NVML's count, which
  // includes each process's CUDA context); nullopt when NVML did not answer.
  std::optional<std::vector<std::pair<pid_t, uint64_t>>> process_memory() const;

 private:
  struct Nvml;
  explicit GpuWatch(std::unique_ptr<Nvml> nvml);
  std::unique_ptr<Nvml> nvml_;
};

// Collects what a GpuWatch sees over one measurement into a GpuContention.
class ContentionRecorder {
 public:
  explicit ContentionRecorder(const GpuWatch* watch) : watch_(watch) {}
  void start(const std::set<pid_t>& own);   // the SM clock before, a first look
  void look(const std::set<pid_t>& own);    // during
  GpuContention finish(const std::set<pid_t>& own);  // a last look, the SM clock after

 private:
  const GpuWatch* watch_;
  GpuContention c_;
};

}  // namespace kagent
