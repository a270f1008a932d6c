// The evaluation's phases and the GPU's timing lock, in-process on the CPU: PhaseRunner holds the
// lock exclusively for the phases that time (timing, baselines, profile), keeps the request's
// shared hold for the others, and goes back to it after each timed phase, failed or not. Another
// open file description on the same file (a sibling worker) probes what is held. Each phase is
// announced (a phase line) before its wait for the lock.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "worker/protocol/gpu_timing_lock.h"
#include "worker/service/phase_runner.h"
#include "worker/service/worker_timing_lock.h"

using namespace kagent;
using namespace kagent::worker;

namespace {

// What a sibling worker could take now: "exclusive", "shared" or "nothing".
std::string sibling_could(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return "exclusive";
  if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) return "shared";
  return "nothing";
}

}  // namespace

TEST_CASE("the phases that time hold the GPU's timing lock exclusively; the others share it") {
  testing::TempDir dir("kagent-phase-lock");
  const std::string path = create_gpu_timing_locks(dir.str(), {"GPU-phase"}).at(0);
  auto lock = GpuTimingLock::open(path);
  REQUIRE(lock);
  EvalResult result;
  PhaseRunner phases(result, &*lock);
  const GpuTimingLock::Hold request(&*lock, LockMode::Shared);  // as the worker holds it for an evaluate request
  std::map<std::string, std::string> seen;
  const auto probe = [&](const char* name) {
    return phases.run(name, [&] {
      seen[name] = sibling_could(path);
      return true;
    });
  };
  for (const char* name : {"load", "correctness", "guards_before_timing", "timing", "guards_after_timing", "baselines",
                           "profile"})
    CHECK(probe(name));
  CHECK(seen["load"] == "shared");
  CHECK(seen["correctness"] == "shared");
  CHECK(seen["guards_before_timing"] == "shared");
  CHECK(seen["timing"] == "nothing");
  CHECK(seen["guards_after_timing"] == "shared");
  CHECK(seen["baselines"] == "nothing");
  CHECK(seen["profile"] == "nothing");
  CHECK(lock->mode() == LockMode::Shared);  // back to the request's hold

  // A timed phase that fails lets go of its exclusive hold all the same.
  CHECK_FALSE(phases.run("timing", []() -> bool { throw std::runtime_error("CUDA error: an illegal memory access"); }));
  CHECK(lock->mode() == LockMode::Shared);
  CHECK(sibling_could(path) == "shared");
  CHECK(result.phases.size() == 8);
}

TEST_CASE("which phases need the GPU alone") {
  for (const char* name : {"timing", "baselines", "profile"}) CHECK(phase_needs_gpu_alone(name));
  for (const char* name : {"load", "correctness", "guards_before_timing", "guards_after_timing"})
    CHECK_FALSE(phase_needs_gpu_alone(name));
}

TEST_CASE("each phase is announced as it starts, before its wait for the lock, where the runner has a pipe") {
  // The orchestrator's per-phase budgets (worker/client/phase_watch.h) start a phase's clocks at
  // its phase line and skip the lock's wait after it.
  testing::TempDir dir("kagent-phase-announce");
  std::vector<std::string> lines;
  const Progress progress = [&](const nlohmann::json& line) {
    lines.push_back(line.contains("phase") ? "phase " + line["phase"].get<std::string>()
                                           : "lock " + line.value("lock", "") + " " + line.value("mode", ""));
  };
  auto lock = GpuTimingLock::open(create_gpu_timing_locks(dir.str(), {"GPU-say"}).at(0), timing_lock_hooks(progress));
  REQUIRE(lock);
  EvalResult result;
  const GpuTimingLock::Hold request(&*lock, LockMode::Shared);
  CHECK(PhaseRunner(result, &*lock).run("load", [] { return true; }));  // nowhere to announce: nothing said
  {
    PhaseRunner phases(result, &*lock, progress);
    CHECK(phases.run("correctness", [] { return true; }));
    CHECK(phases.run("baselines", [] { return true; }));
    announce_phase(progress, "state_check");  // the request's own step, as worker_service.cpp says it
  }
  CHECK(PhaseRunner(result, &*lock).run("profile", [] { return true; }));
  const std::vector<std::string> said = {"lock held shared",      "phase correctness",     "phase baselines",
                                         "lock held exclusive",   "lock held shared",      "phase state_check",
                                         "lock held exclusive",   "lock held shared"};
  CHECK(lines == said);
}

TEST_CASE("without a lock file the phases run unlocked") {
  EvalResult result;
  PhaseRunner phases(result, nullptr);
  CHECK(phases.run("timing", [] { return true; }));
}

TEST_CASE("a replacement worker joins its GPU's lock before CUDA starts: shared, its waits said, none without the variables") {
  testing::TempDir dir("kagent-join-early");
  const std::string path = create_gpu_timing_locks(dir.str(), {"GPU-early"}).at(0);
  ::unsetenv(kTimingLockUuidEnv);
  ::setenv(kTimingLockDirEnv, dir.str().c_str(), 1);
  std::vector<std::string> lines;
  const Progress progress = [&](const nlohmann::json& line) { lines.push_back(line.value("lock", "")); };
  CHECK_FALSE(join_timing_lock_early(progress));  // a first worker: its GPU is not known yet
  ::setenv(kTimingLockUuidEnv, "GPU-missing", 1);
  CHECK_FALSE(join_timing_lock_early(progress));  // no such file: it opens the lock later, as before
  ::setenv(kTimingLockUuidEnv, "GPU-early", 1);
  auto joined = join_timing_lock_early(progress);
  ::unsetenv(kTimingLockUuidEnv);
  ::unsetenv(kTimingLockDirEnv);
  REQUIRE(joined);
  CHECK(joined->path() == path);

  // A sibling times: the start waits for it, and says so (the client's watchdog hears it).
  Fd sibling(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(::flock(sibling.get(), LOCK_EX) == 0);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::flock(sibling.get(), LOCK_UN);
  });
  {
    const GpuTimingLock::Hold starting(&*joined, LockMode::Shared);
    CHECK(sibling_could(path) == "shared");
    CHECK(joined->waited_seconds() >= 0.15);
  }
  release.join();
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0] == "waiting");
  CHECK(lines[1] == "held");
}
