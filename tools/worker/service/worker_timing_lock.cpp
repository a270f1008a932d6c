#include "worker/service/worker_timing_lock.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "worker/protocol/protocol.h"
#include "worker/service/gpu_wait.h"

namespace kagent::worker {

GpuTimingLock::Hooks timing_lock_hooks(Progress progress) {
  GpuTimingLock::Hooks hooks;
  // A conversion or release lets go: the kernels this process queued finish first. An error
  // here is the candidate's to answer for in its own phase, not the lock's.
  hooks.before_release = [] { (void)cudaDeviceSynchronize(); };
  const auto say = [progress = std::move(progress)](const protocol::LockEvent& e) {
    if (progress) progress(protocol::lock_line(e));
  };
  hooks.waiting = [say](LockMode wanted) { say({protocol::LockEvent::Kind::Waiting, wanted, 0, ""}); };
  hooks.changed = [say](LockMode now, double waited) {
    process_gpu_wait().lock_changed(now);  // spin inside a timing, KAGENT_GPU_WAIT's way outside
    say({protocol::LockEvent::Kind::Held, now, waited, ""});
  };
  hooks.broken = [say](const std::string& why) {
    process_gpu_wait().spin_for_good();  // unlocked from now on: nothing says when a timing runs
    std::fprintf(stderr, "kagent-worker: the GPU's timing lock is broken, timings run unlocked: %s\n", why.c_str());
    say({protocol::LockEvent::Kind::Broken, LockMode::None, 0, why});
  };
  return hooks;
}

std::optional<GpuTimingLock> join_timing_lock_early(const Progress& progress) {
  const char* folder = std::getenv(kTimingLockDirEnv);
  const char* uuid = std::getenv(kTimingLockUuidEnv);
  if (!folder || !*folder || !uuid || !*uuid) return std::nullopt;
  return GpuTimingLock::open(gpu_timing_lock_path(folder, uuid), timing_lock_hooks(progress));
}

}  // namespace kagent::worker
