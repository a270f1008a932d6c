// CUPTI activity tracing of kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): name, start/end,
// launch configuration and resources of every kernel that runs between start() and stop(),
// on any stream. This is the first profile phase; hardware counters are a separate phase
// (range_profiler.h), never collected at the same time.
//
// Never use alongside torch.profiler/Kineto, Nsight tools or compute-sanitizer: they own the
// same process-wide CUPTI callbacks. torch's wheel carries its own libcupti.so.13 (for
// Kineto) with the same soname as the toolkit's one we link; whichever loads first serves both.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profiler/profiler_error.h"

namespace kagent::profiler {

struct KernelRecord {
  std::string name;     // demangled (abi::__cxa_demangle); the mangled name when it does not demangle
  std::string mangled;  // as CUPTI reports it
  uint64_t start_ns = 0, end_ns = 0;  // CUPTI timestamps (same clock as KernelActivity::now_ns())
  std::array<int32_t, 3> grid{}, block{};
  int registers = 0;                          // per thread
  int64_t static_smem = 0, dynamic_smem = 0;  // bytes per block
  int64_t local_mem_per_thread = 0;           // bytes
  uint32_t stream_id = 0, correlation_id = 0, device_id = 0, context_id = 0;
  double duration_ms() const;
};

// A memset or memcpy as CUPTI saw it (CUPTI_ACTIVITY_KIND_MEMSET/MEMCPY, only when asked for):
// the side-stream guard's marker and snapshot, in the same clock as the kernels.
struct CopyRecord {
  bool memcpy = false;  // false: a memset
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;  // memsets only
  uint32_t stream_id = 0, correlation_id = 0;
};

// Collects kernel records between start() and stop(). One instance at a time per process:
// CUPTI delivers activity buffers to process-wide callbacks, so a second live instance
// throws. RAII: the destructor disables the activity kind and flushes.
class KernelActivity {
 public:
  // Throws cuda::Error with CUPTI's message if it cannot be enabled. `copies`: also record
  // memsets and memcpys (take_copies()).
  explicit KernelActivity(bool copies = false);
  ~KernelActivity();
  KernelActivity(const KernelActivity&) = delete;
  KernelActivity& operator=(const KernelActivity&) = delete;

  void start();                       // cudaDeviceSynchronize + flush; earlier records are dropped
  std::vector<KernelRecord> stop();   // cudaDeviceSynchronize + cuptiActivityFlushAll; records since start(), by start time
  std::vector<CopyRecord> take_copies();  // memsets and memcpys between start() and stop(), by start time
  static uint64_t now_ns();           // cuptiGetTimestamp

  // Records CUPTI could not store (no buffer space) since start(); non-zero means stop() is incomplete.
  size_t dropped() const;

  struct State;  // shared with CUPTI's buffer callbacks

 private:
  std::unique_ptr<State> state_;
  bool copies_ = false;
};

}  // namespace kagent::profiler
