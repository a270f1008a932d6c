// KAGENT_GPU_WAIT on a real GPU: the primary context's scheduling flags switch in place, spin
// inside an exclusive hold of the timing lock and the setting's way outside it; `spin` touches
// nothing. The switch is the worker's (worker/service/gpu_wait.h), driven as its lock hook drives it.
#include "worker/service/gpu_wait.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "cuda/cuda_error.h"

using kagent::LockMode;
using kagent::worker::GpuWait;
using kagent::worker::GpuWaitSwitch;

namespace {

// A real wait for the GPU after each switch: the context works whatever its flags.
void wait_for_gpu() {
  void* p = nullptr;
  kagent::cuda::check(cudaMalloc(&p, 64 << 20), "cudaMalloc");
  kagent::cuda::check(cudaMemsetAsync(p, 1, 64 << 20, nullptr), "cudaMemsetAsync");
  kagent::cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  kagent::cuda::check(cudaFree(p), "cudaFree");
}

}  // namespace

TEST_CASE("the scheduling flags follow the timing lock: spin inside an exclusive hold, the setting outside") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);  // the primary context, active as in a worker
  for (const auto& [wait, flag] : {std::pair{GpuWait::Yield, unsigned{CU_CTX_SCHED_YIELD}},
                                   std::pair{GpuWait::Block, unsigned{CU_CTX_SCHED_BLOCKING_SYNC}}}) {
    CAPTURE(static_cast<int>(wait));
    GpuWaitSwitch s(wait);
    s.lock_changed(LockMode::Exclusive);  // before start: nothing (CUDA may not have started)
    REQUIRE_FALSE(s.start(0));
    CHECK(s.current_flags() == flag);
    wait_for_gpu();
    s.lock_changed(LockMode::Shared);  // no change of side: nothing
    CHECK(s.current_flags() == flag);
    s.lock_changed(LockMode::Exclusive);
    CHECK(s.current_flags() == unsigned{CU_CTX_SCHED_SPIN});
    wait_for_gpu();
    s.lock_changed(LockMode::None);
    CHECK(s.current_flags() == flag);
    wait_for_gpu();
  }
}

TEST_CASE("a broken lock: spin from then on, whatever the lock says") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  GpuWaitSwitch s(GpuWait::Block);
  REQUIRE_FALSE(s.start(0));
  CHECK(s.current_flags() == unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  s.spin_for_good();
  CHECK(s.current_flags() == unsigned{CU_CTX_SCHED_SPIN});
  s.lock_changed(LockMode::Exclusive);
  s.lock_changed(LockMode::None);
  CHECK(s.current_flags() == unsigned{CU_CTX_SCHED_SPIN});
  wait_for_gpu();
}

TEST_CASE("spin, the default, leaves the flags as CUDA set them") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  GpuWaitSwitch yield(GpuWait::Yield);
  REQUIRE_FALSE(yield.start(0));
  const auto before = yield.current_flags();
  GpuWaitSwitch spin(GpuWait::Spin);
  REQUIRE_FALSE(spin.start(0));
  spin.lock_changed(LockMode::Exclusive);
  spin.lock_changed(LockMode::Shared);
  CHECK(spin.current_flags() == before);
}
