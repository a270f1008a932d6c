#include "profiler/kernel_activity.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "cuda/cuda_error.h"
#include "profiler/cupti_check.h"
#include "profiler/profiler_error.h"
#include "profiler/kernel_names.h"

namespace kagent::profiler {

struct KernelActivity::State {
  std::vector<KernelRecord> records;  // guarded by g_mutex below
  std::vector<CopyRecord> copies;
  size_t dropped = 0;
};

namespace {

// CUPTI hands finished buffers to process-wide C callbacks (possibly on its own thread), so
// the one live KernelActivity is found through this pointer. It is never held across a
// CUPTI call: cuptiActivityFlushAll runs the completion callback on the calling thread.
std::mutex g_mutex;
KernelActivity::State* g_active = nullptr;

constexpr size_t kBufferBytes = size_t{4} << 20;  // ~15k kernel records per buffer
constexpr size_t kBufferAlign = 8;                // CUPTI requires 8-byte aligned buffers

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // A null buffer makes CUPTI drop (and count) records instead of failing.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

KernelRecord to_record(const CUpti_ActivityKernel10& k) {
  KernelRecord r;
  r.mangled = k.name ? k.name : "<unnamed>";
  r.name = demangle(r.mangled);
  r.start_ns = k.start;
  r.end_ns = k.end;
  r.grid = {k.gridX, k.gridY, k.gridZ};
  r.block = {k.blockX, k.blockY, k.blockZ};
  r.registers = k.registersPerThread;
  r.static_smem = k.staticSharedMemory;
  r.dynamic_smem = k.dynamicSharedMemory;
  r.local_mem_per_thread = k.localMemoryPerThread;
  r.stream_id = k.streamId;
  r.correlation_id = k.correlationId;
  r.device_id = k.deviceId;
  r.context_id = k.contextId;
  return r;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  std::unique_ptr<uint8_t, decltype(&std::free)> owned(buffer, &std::free);
  std::vector<KernelRecord> parsed;
  std::vector<CopyRecord> copies;
  CUpti_Activity* record = nullptr;
  // Iteration ends with CUPTI_ERROR_MAX_LIMIT_REACHED; any other error also ends the buffer.
  while (buffer && cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      parsed.push_back(to_record(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      copies.push_back({false, m.start, m.end, m.bytes, m.value, m.streamId, m.correlationId});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      copies.push_back({true, m.start, m.end, m.bytes, 0, m.streamId, m.correlationId});
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::lock_guard lock(g_mutex);
  if (!g_active) return;  // tracing ended; records of a finished window are of no use
  g_active->dropped += dropped;
  g_active->records.insert(g_active->records.end(), std::make_move_iterator(parsed.begin()),
                           std::make_move_iterator(parsed.end()));
  g_active->copies.insert(g_active->copies.end(), copies.begin(), copies.end());
}

void synchronize(const char* when) { cuda::check(cudaDeviceSynchronize(), when); }

}  // namespace

double KernelRecord::duration_ms() const { return end_ns > start_ns ? static_cast<double>(end_ns - start_ns) * 1e-6 : 0.0; }

KernelActivity::KernelActivity(bool copies) : state_(std::make_unique<State>()), copies_(copies) {
  {
    std::lock_guard lock(g_mutex);
    if (g_active) throw ProfilerError("another KernelActivity is live (CUPTI's activity callbacks are process-wide)");
    g_active = state_.get();
  }
  try {
    KAGENT_CUDA_CHECK(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed));
    KAGENT_CUDA_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    if (copies_) {
      KAGENT_CUDA_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
      KAGENT_CUDA_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    }
  } catch (...) {
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    std::lock_guard lock(g_mutex);
    g_active = nullptr;
    throw;
  }
}

KernelActivity::~KernelActivity() {
  // No device synchronisation here: the context may be broken; unfinished records are dropped.
  (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (copies_) {
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  }
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(g_mutex);
  g_active = nullptr;
}

void KernelActivity::start() {
  synchronize("before tracing");
  KAGENT_CUDA_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard lock(g_mutex);
  state_->records.clear();
  state_->copies.clear();
  state_->dropped = 0;
}

std::vector<CopyRecord> KernelActivity::take_copies() {
  std::vector<CopyRecord> out;
  {
    std::lock_guard lock(g_mutex);
    out.swap(state_->copies);
  }
  std::sort(out.begin(), out.end(), [](const CopyRecord& a, const CopyRecord& b) { return a.start_ns < b.start_ns; });
  return out;
}

std::vector<KernelRecord> KernelActivity::stop() {
  synchronize("after tracing");
  KAGENT_CUDA_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::vector<KernelRecord> out;
  {
    std::lock_guard lock(g_mutex);
    out.swap(state_->records);
  }
  std::sort(out.begin(), out.end(), [](const KernelRecord& a, const KernelRecord& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.correlation_id < b.correlation_id;
  });
  return out;
}

size_t KernelActivity::dropped() const {
  std::lock_guard lock(g_mutex);
  return state_->dropped;
}

uint64_t KernelActivity::now_ns() {
  uint64_t t = 0;
  KAGENT_CUDA_CHECK(cuptiGetTimestamp(&t));
  return t;
}

}  // namespace kagent::profiler
