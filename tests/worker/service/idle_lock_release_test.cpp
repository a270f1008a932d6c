// The idle release of the GPU's timing lock (idle_lock_release.h), on the CPU with a real lock
// file: a quiet candidate lets a sibling time; its next CUDA call waits for that timing and holds
// the lock again before it proceeds; calls keep it held; a call during the release's
// synchronisation cancels it; the scope's end holds the lock again.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "temp_dir.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "profiler/cuda_call_hook.h"
#include "worker/service/host_work_release.h"
#include "worker/service/idle_lock_release.h"

using namespace kagent;
using namespace kagent::worker;
using namespace std::chrono_literals;

namespace {

// Whether a sibling worker could take the lock exclusively now (and so time).
bool sibling_could_time(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
}

// Polls `what` for up to a second.
template <class F>
bool within_a_second(F what) {
  for (int i = 0; i < 100; ++i) {
    if (what()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// A lock file of its own, and this worker's lock on it held shared, as a request holds it.
struct SharedLock {
  explicit SharedLock(const char* name)
      : dir(name), path(create_gpu_timing_locks(dir.str(), {"GPU-idle"}).at(0)), lock(GpuTimingLock::open(path).value()) {
    lock.set(LockMode::Shared);
  }
  testing::TempDir dir;
  std::string path;
  GpuTimingLock lock;
};

}  // namespace

TEST_CASE("a quiet candidate lets a sibling time; its next CUDA call waits for the timing, then holds the lock") {
  SharedLock held("kagent-idle-release");
  GpuTimingLock* lock = &held.lock;
  const std::string& path = held.path;
  std::atomic<int> syncs = 0;
  {
    IdleLockRelease release(*lock, 300ms, [&] { ++syncs; });  // (slack for a loaded machine)
    CHECK_FALSE(sibling_could_time(path));
    REQUIRE(within_a_second([&] { return sibling_could_time(path); }));  // let go after the quiet
    CHECK(syncs >= 1);  // the device synchronised first
    CHECK(release.releases() == 1);

    // A sibling times for 300 ms: the candidate's next CUDA call waits for it.
    auto sibling = GpuTimingLock::open(path);
    REQUIRE(sibling);
    sibling->set(LockMode::Exclusive);
    std::jthread ends([&] {
      std::this_thread::sleep_for(300ms);
      sibling->set(LockMode::None);
    });
    const auto t0 = std::chrono::steady_clock::now();
    release.on_cuda_call();
    CHECK(std::chrono::steady_clock::now() - t0 >= 250ms);
    CHECK(lock->mode() == LockMode::Shared);
    CHECK_FALSE(sibling_could_time(path));
    CHECK(release.released_seconds() > 0.0);
  }
  CHECK(lock->mode() == LockMode::Shared);  // as the request left it
}

TEST_CASE("CUDA calls keep the lock held; a call during the release's synchronisation cancels it") {
  SharedLock held("kagent-idle-busy");
  GpuTimingLock* lock = &held.lock;
  const std::string& path = held.path;
  {
    IdleLockRelease release(*lock, 300ms, [] {});
    for (int i = 0; i < 20; ++i) {  // a call every 20 ms for 400 ms (slack for a loaded machine)
      release.on_cuda_call();
      CHECK_FALSE(sibling_could_time(path));
      std::this_thread::sleep_for(20ms);
    }
    CHECK(release.releases() == 0);
  }
  {
    // A call comes on another thread while the watcher synchronises: nothing is let go then.
    std::atomic<IdleLockRelease*> self = nullptr;
    std::atomic<bool> synced = false;
    IdleLockRelease release(*lock, 300ms, [&] {
      std::jthread([&] { self.load()->on_cuda_call(); }).join();
      synced = true;
    });
    self = &release;
    REQUIRE(within_a_second([&] { return synced.load(); }));
    std::this_thread::sleep_for(20ms);  // the watcher back from its synchronisation (the next quiet ends at 300 ms)
    CHECK(release.releases() == 0);
    CHECK_FALSE(sibling_could_time(path));
  }
  CHECK(lock->mode() == LockMode::Shared);
}

TEST_CASE("a scope that ends while the lock is let go holds it again; a lock not held is left alone") {
  SharedLock held("kagent-idle-end");
  GpuTimingLock* lock = &held.lock;
  const std::string& path = held.path;
  {
    IdleLockRelease release(*lock, 20ms, [] {});
    REQUIRE(within_a_second([&] { return sibling_could_time(path); }));
  }
  CHECK(lock->mode() == LockMode::Shared);
  CHECK_FALSE(sibling_could_time(path));
  lock->set(LockMode::None);
  {
    IdleLockRelease release(*lock, 20ms, [] {});
    std::this_thread::sleep_for(150ms);
    CHECK(release.releases() == 0);
    release.on_cuda_call();
  }
  CHECK(lock->mode() == LockMode::None);
}

// Without the CUDA call hook no call would take the lock back: a release then would let the
// candidate's kernels run beside a sibling's timing. CUPTI has one callback subscriber; here it is
// taken first, as a candidate's torch.profiler (Kineto) takes it (on a machine without a GPU
// neither subscribes, which is the same case).
TEST_CASE("the phase's release without CUDA's call hook holds the lock through the phase") {
  SharedLock held("kagent-idle-hookless");
  profiler::CudaCallHook other_tool([] {});
  {
    HostWorkRelease release(held.lock, 20ms, "load");
    CHECK_FALSE(release.active());
    std::this_thread::sleep_for(200ms);
    CHECK_FALSE(sibling_could_time(held.path));
  }
  CHECK(held.lock.mode() == LockMode::Shared);
  CHECK_FALSE(sibling_could_time(held.path));
}

TEST_CASE("the worker's setting: milliseconds; unset means the default, 0 never, invalid is refused") {
  CHECK(parse_idle_release(nullptr) == kIdleReleaseDefault);
  CHECK(parse_idle_release("") == kIdleReleaseDefault);
  CHECK(parse_idle_release("0") == 0ms);
  CHECK(parse_idle_release("250") == 250ms);
  for (const char* bad : {"abc", "-5", "10ms", " 10"}) CHECK_FALSE(parse_idle_release(bad).has_value());
  ::unsetenv(kIdleReleaseEnv);
  CHECK(idle_release_from_environment() == kIdleReleaseDefault);
  ::setenv(kIdleReleaseEnv, "0", 1);
  CHECK(idle_release_from_environment() == 0ms);
  ::setenv(kIdleReleaseEnv, "abc", 1);  // a worker started by hand: logged, the default taken
  CHECK(idle_release_from_environment() == kIdleReleaseDefault);
  ::unsetenv(kIdleReleaseEnv);
}
