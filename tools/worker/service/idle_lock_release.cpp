#include "worker/service/idle_lock_release.h"

#include <cstdio>
#include <cstdlib>

namespace kagent::worker {

std::chrono::milliseconds idle_release_from_environment() {
  const char* text = std::getenv(kIdleReleaseEnv);
  if (auto ms = parse_idle_release(text)) return *ms;
  // kagent refuses such a value before a worker starts (agent/cli/environment_settings.h); a
  // worker started otherwise says so and keeps the default.
  std::fprintf(stderr, "kagent-worker: %s=%s is not a number of milliseconds: %lld ms taken\n", kIdleReleaseEnv, text,
               static_cast<long long>(kIdleReleaseDefault.count()));
  return kIdleReleaseDefault;
}

namespace {
// The watcher's own CUDA calls (its synchronisation) come back through on_cuda_call.
thread_local const IdleLockRelease* watching = nullptr;
}  // namespace

IdleLockRelease::IdleLockRelease(GpuTimingLock& lock, std::chrono::milliseconds idle, std::function<void()> sync_device)
    : lock_(lock), idle_(idle), sync_device_(std::move(sync_device)), last_call_(std::chrono::steady_clock::now()),
      watcher_([this](std::stop_token stop) { watch(std::move(stop)); }) {}

IdleLockRelease::~IdleLockRelease() {
  watcher_.request_stop();
  watcher_.join();
  std::lock_guard held(mutex_);
  if (state_ == State::Released) {
    lock_.set(LockMode::Shared);
    released_ += std::chrono::steady_clock::now() - released_at_;
  }
  state_ = State::Held;
}

void IdleLockRelease::on_cuda_call() {
  if (watching == this) return;
  std::lock_guard held(mutex_);
  if (state_ == State::Releasing) {
    state_ = State::Held;  // the watcher's synchronisation may not cover this call: it lets go of nothing
  } else if (state_ == State::Released) {
    lock_.set(LockMode::Shared);  // waits (through the turnstile, said on the pipe) for a sibling's timing
    released_ += std::chrono::steady_clock::now() - released_at_;
    state_ = State::Held;
  }
  last_call_ = std::chrono::steady_clock::now();  // the call proceeds now, after any wait
}

void IdleLockRelease::watch(std::stop_token stop) {
  watching = this;
  std::unique_lock held(mutex_);
  while (!stop.stop_requested()) {
    const auto due = last_call_ + idle_;
    // Let go: nothing to do until the next call; held: until the quiet is long enough. A lock not
    // held shared (broken, never taken) is not this class's to let go or take.
    if (state_ != State::Held || std::chrono::steady_clock::now() < due || lock_.mode() != LockMode::Shared) {
      wake_.wait_until(held, stop, state_ == State::Held ? due : std::chrono::steady_clock::now() + idle_,
                       [] { return false; });
      continue;
    }
    state_ = State::Releasing;
    held.unlock();
    sync_device_();
    held.lock();
    if (state_ != State::Releasing) continue;  // a CUDA call came in meanwhile
    if (stop.stop_requested()) {
      state_ = State::Held;
      break;
    }
    lock_.let_go_synchronised();  // nothing of ours runs, nothing was queued since the synchronisation
    state_ = State::Released;
    released_at_ = std::chrono::steady_clock::now();
    ++releases_;
  }
}

int IdleLockRelease::releases() const {
  std::lock_guard held(mutex_);
  return releases_;
}

double IdleLockRelease::released_seconds() const {
  std::lock_guard held(mutex_);
  auto total = released_;
  if (state_ == State::Released) total += std::chrono::steady_clock::now() - released_at_;
  return std::chrono::duration<double>(total).count();
}

}  // namespace kagent::worker
