#include "worker/service/host_work_release.h"

#include <cstdio>

#include <cuda_runtime_api.h>

namespace kagent::worker {

namespace {

// From the watcher's thread, which no graph capture of the candidate's may forbid it (a capture
// in torch's default "global" mode forbids a device synchronisation from any thread that is not
// relaxed, and would fail). An error of the candidate's kernels is its phase's to report.
void synchronise() {
  cudaStreamCaptureMode relaxed = cudaStreamCaptureModeRelaxed;
  if (const cudaError_t e = cudaThreadExchangeStreamCaptureMode(&relaxed); e != cudaSuccess)
    std::fprintf(stderr, "kagent-worker: cudaThreadExchangeStreamCaptureMode: %s\n", cudaGetErrorString(e));
  (void)cudaDeviceSynchronize();
}

}  // namespace

HostWorkRelease::HostWorkRelease(GpuTimingLock& lock, std::chrono::milliseconds idle, const char* phase)
    : phase_(phase), hook_([this] {
        if (IdleLockRelease* release = feeding_.load(std::memory_order_acquire)) release->on_cuda_call();
      }) {
  if (!hook_.active()) {
    std::fprintf(stderr, "kagent-worker: the GPU's timing lock is held through %s: %s\n", phase_,
                 hook_.why_inactive().c_str());
    return;
  }
  // Calls before this one find nothing to feed: the lock is still held, and the release's quiet
  // starts now.
  release_.emplace(lock, idle, synchronise);
  feeding_.store(&*release_, std::memory_order_release);
}

HostWorkRelease::~HostWorkRelease() {
  if (const int n = release_ ? release_->releases() : 0)
    std::fprintf(stderr, "kagent-worker: the GPU's timing lock let go %d time(s), %.2f s in all, in %s: no CUDA call came "
                 "meanwhile\n", n, release_->released_seconds(), phase_);
}

}  // namespace kagent::worker
