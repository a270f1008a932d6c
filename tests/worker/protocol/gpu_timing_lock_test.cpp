// The GPU's timing lock (worker/protocol/gpu_timing_lock.h) with real flocks: two workers are
// two open file descriptions (here two GpuTimingLocks on one file, or a child process); shared
// holders coexist, exclusive excludes, two that both convert to exclusive do not deadlock, the
// lock goes with its holder, the device is synchronised before it goes, and waits are measured
// and announced.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "worker/protocol/gpu_timing_lock.h"

using namespace kagent;
using namespace std::chrono_literals;

namespace {

// Whether another open file description (another worker) could take the lock in `op` now.
bool others_could(const std::string& path, int op) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  const bool got = ::flock(fd.get(), op | LOCK_NB) == 0;
  return got;  // closing the fd lets go again
}

// A lock whose waits are seen: `waits` turns true when it is about to block.
std::optional<GpuTimingLock> watched_lock(const std::string& path, std::atomic<bool>& waits) {
  GpuTimingLock::Hooks hooks;
  hooks.waiting = [&waits](LockMode) { waits = true; };
  return GpuTimingLock::open(path, hooks);
}

void until(const std::atomic<bool>& flag) {
  while (!flag) std::this_thread::sleep_for(1ms);
}

struct LockFile {
  testing::TempDir dir{"kagent-timing-lock"};
  std::string path = create_gpu_timing_locks(dir.str() + "/locks", {"GPU-test"}).at(0);
};

}  // namespace

TEST_CASE("the orchestrator creates the lock file readable by all; the worker opens it read-only") {
  LockFile f;
  CHECK(f.path == gpu_timing_lock_path(f.dir.str() + "/locks", "GPU-test"));
  struct stat st {};
  REQUIRE(::stat(f.path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0666);
  REQUIRE(::stat((f.dir.str() + "/locks").c_str(), &st) == 0);
  CHECK((st.st_mode & 01777) == 01777);
  CHECK(GpuTimingLock::open(f.path));
  CHECK_FALSE(GpuTimingLock::open(f.dir.str() + "/locks/GPU-missing.timing"));  // the worker never creates it
}

TEST_CASE("shared holders coexist; exclusive excludes both kinds") {
  LockFile f;
  auto a = GpuTimingLock::open(f.path);
  auto b = GpuTimingLock::open(f.path);
  REQUIRE(a);
  REQUIRE(b);
  a->set(LockMode::Shared);
  b->set(LockMode::Shared);  // does not block
  CHECK(a->mode() == LockMode::Shared);
  CHECK(b->mode() == LockMode::Shared);
  CHECK(others_could(f.path, LOCK_SH));
  CHECK_FALSE(others_could(f.path, LOCK_EX));
  b->set(LockMode::None);
  a->set(LockMode::Exclusive);
  CHECK(a->mode() == LockMode::Exclusive);
  CHECK_FALSE(others_could(f.path, LOCK_SH));
  CHECK_FALSE(others_could(f.path, LOCK_EX));
  a->set(LockMode::Shared);  // back down: siblings may load and check again, not time
  CHECK(others_could(f.path, LOCK_SH));
  CHECK_FALSE(others_could(f.path, LOCK_EX));
  a->set(LockMode::None);
  CHECK(others_could(f.path, LOCK_EX));
}

TEST_CASE("a holder in another process excludes as well") {
  LockFile f;
  int ready[2], done[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(done) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto lock = GpuTimingLock::open(f.path);
    if (!lock) ::_exit(1);
    lock->set(LockMode::Exclusive);
    char c = 'x';
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    if (::read(done[0], &c, 1) != 1) ::_exit(3);
    ::_exit(0);  // the process's end lets go of the lock
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK_FALSE(others_could(f.path, LOCK_SH));
  REQUIRE(::write(done[1], &c, 1) == 1);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(others_could(f.path, LOCK_EX));
  for (int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);
}

TEST_CASE("two shared holders that both convert to exclusive do not deadlock") {
  LockFile f;
  auto a = GpuTimingLock::open(f.path);
  auto b = GpuTimingLock::open(f.path);
  REQUIRE(a);
  REQUIRE(b);
  a->set(LockMode::Shared);
  b->set(LockMode::Shared);
  std::atomic<int> exclusive_now{0}, most{0};
  const auto time_alone = [&](GpuTimingLock& l) {
    l.set(LockMode::Exclusive);
    most = std::max(most.load(), ++exclusive_now);
    std::this_thread::sleep_for(50ms);
    --exclusive_now;
    l.set(LockMode::None);
  };
  auto ta = std::async(std::launch::async, [&] { time_alone(*a); });
  auto tb = std::async(std::launch::async, [&] { time_alone(*b); });
  REQUIRE(ta.wait_for(5s) == std::future_status::ready);
  REQUIRE(tb.wait_for(5s) == std::future_status::ready);
  CHECK(most == 1);  // one after the other
  CHECK(others_could(f.path, LOCK_EX));
}

TEST_CASE("the lock goes when its holder is destroyed; a Hold restores the mode before it") {
  LockFile f;
  {
    auto a = GpuTimingLock::open(f.path);
    REQUIRE(a);
    a->set(LockMode::Exclusive);
    CHECK_FALSE(others_could(f.path, LOCK_SH));
  }
  CHECK(others_could(f.path, LOCK_EX));

  auto a = GpuTimingLock::open(f.path);
  REQUIRE(a);
  {
    GpuTimingLock::Hold request(&*a, LockMode::Shared);
    CHECK(a->mode() == LockMode::Shared);
    {
      GpuTimingLock::Hold timing(&*a, LockMode::Exclusive);
      CHECK(a->mode() == LockMode::Exclusive);
      GpuTimingLock::Hold inner(&*a, LockMode::Shared);  // asks for less: keeps exclusive
      CHECK(a->mode() == LockMode::Exclusive);
    }
    CHECK(a->mode() == LockMode::Shared);
  }
  CHECK(a->mode() == LockMode::None);
  CHECK(others_could(f.path, LOCK_EX));
  GpuTimingLock::Hold nothing(nullptr, LockMode::Exclusive);  // no lock file: runs unlocked
}

TEST_CASE("a Release lets go for its scope (a sibling may time) and takes back what was held") {
  LockFile f;
  auto a = GpuTimingLock::open(f.path);
  REQUIRE(a);
  {
    GpuTimingLock::Hold request(&*a, LockMode::Shared);
    CHECK_FALSE(others_could(f.path, LOCK_EX));
    {
      GpuTimingLock::Release cpu_work(&*a);
      CHECK(a->mode() == LockMode::None);
      CHECK(others_could(f.path, LOCK_EX));  // the sibling's timing may run now
    }
    CHECK(a->mode() == LockMode::Shared);
    CHECK_FALSE(others_could(f.path, LOCK_EX));
    {
      GpuTimingLock::Hold timing(&*a, LockMode::Exclusive);
      GpuTimingLock::Release compile(&*a);
      CHECK(others_could(f.path, LOCK_EX));
    }
    CHECK(a->mode() == LockMode::Shared);  // the exclusive Hold restored the request's mode after the Release
  }
  CHECK(a->mode() == LockMode::None);
  GpuTimingLock::Release none_held(&*a);  // nothing held: nothing to take back
  CHECK(a->mode() == LockMode::None);
  GpuTimingLock::Release no_lock(nullptr);
}

TEST_CASE("the device is synchronised before the lock is let go or converted, while it is still held") {
  LockFile f;
  std::vector<std::string> seen;
  GpuTimingLock::Hooks hooks;
  hooks.before_release = [&] { seen.push_back(others_could(f.path, LOCK_EX) ? "sync, unlocked" : "sync, held"); };
  auto a = GpuTimingLock::open(f.path, hooks);
  REQUIRE(a);
  a->set(LockMode::Shared);
  CHECK(seen.empty());  // nothing held before: nothing to finish
  a->set(LockMode::Exclusive);
  a->set(LockMode::None);
  CHECK(seen == std::vector<std::string>{"sync, held", "sync, held"});
}

TEST_CASE("a wait is announced, measured and reported with the mode it got") {
  LockFile f;
  auto holder = GpuTimingLock::open(f.path);
  REQUIRE(holder);
  holder->set(LockMode::Exclusive);
  std::atomic<int> waits{0};
  std::vector<std::pair<LockMode, double>> changes;
  GpuTimingLock::Hooks hooks;
  hooks.waiting = [&](LockMode wanted) {
    CHECK(wanted == LockMode::Shared);
    ++waits;
  };
  hooks.changed = [&](LockMode now, double waited) { changes.emplace_back(now, waited); };
  auto waiter = GpuTimingLock::open(f.path, hooks);
  REQUIRE(waiter);
  auto got = std::async(std::launch::async, [&] { waiter->set(LockMode::Shared); });
  CHECK(got.wait_for(200ms) == std::future_status::timeout);  // blocked behind the timing
  CHECK(waits == 1);
  holder->set(LockMode::None);
  REQUIRE(got.wait_for(5s) == std::future_status::ready);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].first == LockMode::Shared);
  CHECK(changes[0].second >= 0.15);
  CHECK(waiter->waited_seconds() == changes[0].second);
  // Uncontended: no announcement, no wait.
  waiter->set(LockMode::None);
  waiter->set(LockMode::Exclusive);
  CHECK(waits == 1);
  CHECK(changes.back() == std::pair{LockMode::Exclusive, 0.0});
}

TEST_CASE("an exclusive waiter is not overtaken by shared holders that come after it (the turnstile)") {
  LockFile f;
  REQUIRE(::access(gpu_timing_turnstile_path(f.path).c_str(), R_OK) == 0);  // made with the lock
  auto loader = GpuTimingLock::open(f.path);  // a sibling's load, holding the lock shared
  REQUIRE(loader);
  loader->set(LockMode::Shared);

  std::atomic<bool> timer_waits{false};
  auto timer = watched_lock(f.path, timer_waits);
  REQUIRE(timer);
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<int64_t> timer_got_ns{-1}, later_got_ns{-1};
  const auto since = [&] { return (std::chrono::steady_clock::now() - t0).count(); };
  std::thread timing([&] {
    timer->set(LockMode::Exclusive);
    timer_got_ns = since();
    std::this_thread::sleep_for(50ms);
    timer->set(LockMode::None);
  });
  until(timer_waits);

  // A load that comes after the timing asked: plain flock would let it share with the loader at
  // once, and a stream of such loads could keep the timing out for good.
  auto later = GpuTimingLock::open(f.path);
  REQUIRE(later);
  std::thread load([&] {
    later->set(LockMode::Shared);
    later_got_ns = since();
  });
  std::this_thread::sleep_for(150ms);
  CHECK(later_got_ns == -1);  // queued behind the timing
  CHECK(timer_got_ns == -1);  // which waits for the loader
  loader->set(LockMode::None);
  timing.join();
  load.join();
  CHECK(timer_got_ns >= 0);
  CHECK(later_got_ns > timer_got_ns);
}

TEST_CASE("a shared holder yields to a waiting timing between its steps, then shares again behind it") {
  LockFile f;
  std::atomic<int> synced{0};
  GpuTimingLock::Hooks hooks;
  hooks.before_release = [&synced] { ++synced; };  // the device synchronised before letting go
  auto worker = GpuTimingLock::open(f.path, hooks);  // a request's load, then its correctness
  REQUIRE(worker);
  worker->set(LockMode::Shared);
  CHECK_FALSE(worker->exclusive_waiting());
  CHECK_FALSE(worker->yield_to_exclusive());  // nobody waits: the hold stays, nothing synchronised
  CHECK(worker->mode() == LockMode::Shared);
  CHECK(synced == 0);

  std::atomic<bool> timer_waits{false};
  auto timer = watched_lock(f.path, timer_waits);
  REQUIRE(timer);
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<int64_t> timer_got_ns{-1}, timer_done_ns{-1};
  const auto since = [&] { return (std::chrono::steady_clock::now() - t0).count(); };
  std::thread timing([&] {
    timer->set(LockMode::Exclusive);
    timer_got_ns = since();
    std::this_thread::sleep_for(100ms);
    timer_done_ns = since();
    timer->set(LockMode::None);
  });
  until(timer_waits);
  // The turnstile says so as soon as the timing waits (a taking of the instant may say so too).
  for (int i = 0; i < 200 && !worker->exclusive_waiting(); ++i) std::this_thread::sleep_for(1ms);
  CHECK(worker->exclusive_waiting());
  CHECK(timer_got_ns == -1);  // it waits for this worker's shared hold

  CHECK(worker->yield_to_exclusive());  // the step's boundary: the timing goes first
  const int64_t back_ns = since();
  timing.join();
  CHECK(synced == 1);
  CHECK(worker->mode() == LockMode::Shared);
  CHECK(timer_got_ns >= 0);
  CHECK(back_ns >= timer_done_ns);  // shared again only once the timing let go
  CHECK_FALSE(worker->exclusive_waiting());
  worker->set(LockMode::None);
  CHECK_FALSE(worker->yield_to_exclusive());  // not held: nothing to yield
}

TEST_CASE("a shared taker queues behind a stuck exclusive waiter only so long, then shares beside it") {
  LockFile f;
  auto long_holder = GpuTimingLock::open(f.path);  // a candidate's first call: host work, held shared
  REQUIRE(long_holder);
  long_holder->set(LockMode::Shared);
  std::atomic<bool> timer_waits{false};
  auto timer = watched_lock(f.path, timer_waits);
  REQUIRE(timer);
  std::thread timing([&] { timer->set(LockMode::Exclusive); });
  until(timer_waits);

  auto load = GpuTimingLock::open(f.path, {}, 200ms);  // patience 200 ms instead of 5 s
  REQUIRE(load);
  const auto t0 = std::chrono::steady_clock::now();
  load->set(LockMode::Shared);  // gives up on the turnstile, shares with the long holder
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(load->mode() == LockMode::Shared);
  CHECK(waited >= 190ms);
  CHECK(waited < 2s);
  load->set(LockMode::None);
  long_holder->set(LockMode::None);
  timing.join();
  CHECK(timer->mode() == LockMode::Exclusive);
}

TEST_CASE("a lock file without a turnstile (made before them) still locks, without that fairness") {
  LockFile f;
  REQUIRE(::unlink(gpu_timing_turnstile_path(f.path).c_str()) == 0);
  auto a = GpuTimingLock::open(f.path);
  auto b = GpuTimingLock::open(f.path);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->turnstile_fd() < 0);
  a->set(LockMode::Shared);
  b->set(LockMode::Shared);
  CHECK_FALSE(others_could(f.path, LOCK_EX));
  a->set(LockMode::None);
  b->set(LockMode::Exclusive);
  CHECK_FALSE(others_could(f.path, LOCK_SH));
}

TEST_CASE("a flock that fails breaks the lock for good, and says so") {
  LockFile f;
  std::string why;
  GpuTimingLock::Hooks hooks;
  hooks.broken = [&](const std::string& w) { why = w; };
  auto a = GpuTimingLock::open(f.path, hooks);
  REQUIRE(a);
  // What a candidate sharing the worker's process could do: close the descriptor under it.
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat st {}, mine {};
    if (::fstat(fd, &st) == 0 && ::stat(f.path.c_str(), &mine) == 0 && st.st_ino == mine.st_ino) ::close(fd);
  }
  a->set(LockMode::Exclusive);
  CHECK(a->broken());
  CHECK(a->mode() == LockMode::None);
  CHECK(why.find("flock(exclusive)") != std::string::npos);
  a->set(LockMode::Shared);  // stays unlocked, quietly
  CHECK(a->mode() == LockMode::None);
}

TEST_CASE("lock modes by name") {
  for (LockMode m : {LockMode::None, LockMode::Shared, LockMode::Exclusive})
    CHECK(lock_mode_from_name(lock_mode_name(m)) == m);
  CHECK_FALSE(lock_mode_from_name("both"));
}
