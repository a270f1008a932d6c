// The client's classification of a misbehaving worker, with real processes (fake_worker).
#include <doctest/doctest.h>

#include <unistd.h>

#include <fcntl.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "worker/client/file_users.h"
#include "worker/client/gpu_admission.h"
#include "worker/client/worker_client.h"

using namespace kagent;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
WorkerOptions fake_options() {
  WorkerOptions o;
  o.worker_path = KAGENT_FAKE_WORKER;
  o.request_timeout = 1500ms;
  o.start_timeout = 10s;
  return o;
}
EvalResult eval_with(WorkerClient& w, const std::string& fault) {
  return w.evaluate("/dev/null", CandidateRef{"cuda", fault, "op", ""});
}
}  // namespace

TEST_CASE("a segfault becomes a crash, and the next evaluation runs in a fresh worker") {
  WorkerClient w(fake_options());
  CHECK(eval_with(w, "ok").status == Status::Correct);
  EvalResult r = eval_with(w, "segv");
  CHECK(r.status == Status::Crash);
  CHECK(r.message.find("signal 11") != std::string::npos);
  CHECK(r.worker_log_tail.find("fake worker: segv") != std::string::npos);
  CHECK(eval_with(w, "ok").status == Status::Correct);
  CHECK(w.restarts() == 1);
}

TEST_CASE("abort and exit() are crashes with how the worker ended") {
  WorkerClient w(fake_options());
  EvalResult a = eval_with(w, "abort");
  CHECK(a.status == Status::Crash);
  CHECK(a.message.find("signal 6") != std::string::npos);
  EvalResult e = eval_with(w, "exit");
  CHECK(e.status == Status::Crash);
  CHECK(e.message.find("exit 7") != std::string::npos);
  CHECK(eval_with(w, "ok").status == Status::Correct);
}

TEST_CASE("a hang is killed by the watchdog and classified as a timeout") {
  WorkerClient w(fake_options());
  auto start = std::chrono::steady_clock::now();
  EvalResult r = eval_with(w, "hang");
  CHECK(r.status == Status::Timeout);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(eval_with(w, "ok").status == Status::Correct);
}

TEST_CASE("garbage on the protocol pipe is a crash, not a hang or an exception") {
  WorkerClient w(fake_options());
  EvalResult r = eval_with(w, "garbage");
  CHECK(r.status == Status::Crash);
  CHECK(eval_with(w, "ok").status == Status::Correct);
}

TEST_CASE("a missing worker binary is one clear internal error") {
  WorkerOptions o = fake_options();
  o.worker_path = "/nonexistent/kagent-worker";
  WorkerClient w(o);
  EvalResult r = eval_with(w, "ok");
  CHECK(r.status == Status::InternalError);
  CHECK(r.message.find("not found") != std::string::npos);
}

// Isolation (worker_client.h): a failure that a candidate before could have caused is tried
// again on a fresh worker; the candidate before is charged when the retry passes.
TEST_CASE("a problem_error after a candidate is tried on a fresh worker, and the candidate before is charged") {
  WorkerClient w(fake_options());
  CHECK(w.evaluate("/dev/null", CandidateRef{"cuda", "poison", "op", ""}, {}, "the poisoner").status == Status::Correct);
  const EvalResult r = w.evaluate("/dev/null", CandidateRef{"cuda", "ok", "op", ""}, {}, "an honest one");
  CHECK(r.status == Status::Correct);
  REQUIRE(r.isolation.retry);
  CHECK(r.isolation.retry->first_status == "problem_error");
  CHECK(r.isolation.retry->why == "after_candidate");
  CHECK(r.isolation.retry->after == "the poisoner");
  CHECK(r.isolation.retry->first_message.find("Offset increment") != std::string::npos);
  CHECK(w.restarts() == 1);
  const auto charges = w.take_charges();
  REQUIRE(charges.size() == 1);
  CHECK(charges[0].candidate == "the poisoner");
  CHECK(charges[0].next == "an honest one");
  CHECK(charges[0].failed_status == "problem_error");
  CHECK(w.take_charges().empty());
  // The JSON keeps it.
  const EvalResult back = nlohmann::json(r).get<EvalResult>();
  REQUIRE(back.isolation.retry);
  CHECK(back.isolation.retry->after == "the poisoner");
}

TEST_CASE("a problem broken indeed stays a problem_error, tried once more only after a candidate") {
  WorkerClient w(fake_options());
  const EvalResult first = w.evaluate("/dev/null", CandidateRef{"cuda", "broken", "op", ""});
  CHECK(first.status == Status::ProblemError);
  CHECK_FALSE(first.isolation.retry);  // a fresh worker's verdict stands
  CHECK(w.restarts() == 0);
  const EvalResult again = w.evaluate("/dev/null", CandidateRef{"cuda", "broken", "op", ""});
  CHECK(again.status == Status::ProblemError);
  REQUIRE(again.isolation.retry);  // after a candidate: tried on a fresh worker, failed there too
  CHECK(w.restarts() == 1);
  CHECK(w.take_charges().empty());  // nobody before is to blame
}

TEST_CASE("a worker that answered an evaluation with an error line is not used again") {
  // The chaos test's finding: a capture left open made the worker's reply an error line, the
  // worker stayed, and every later candidate in it failed as the first of its worker (so never
  // retried).
  WorkerClient w(fake_options());
  const EvalResult culprit = eval_with(w, "error_reply");
  CHECK(culprit.status == Status::InternalError);
  const EvalResult next = eval_with(w, "ok");
  CHECK(next.status == Status::Correct);
  CHECK_FALSE(next.isolation.retry);  // a fresh worker from the start, not a retry
  CHECK(w.restarts() == 1);
}

TEST_CASE("a reply line the candidate writes on the worker's pipe is no verdict, and the candidate is rejected") {
  // Candidate code shares the worker's process and its reply pipe: a line with the request's id
  // saying "correct" came first. Without the nonce check the client took it as the verdict.
  WorkerClient w(fake_options());
  const EvalResult r = eval_with(w, "forge");
  CHECK(r.status == Status::Rejected);
  CHECK(r.reason == "reply_forged");
  CHECK(r.message.find("\"forged\"") != std::string::npos);  // the forged line, quoted
  REQUIRE_FALSE(r.guards.empty());
  CHECK(r.guards.back().name == "reply_forged");
  CHECK(r.guards.back().message.find("forged") != std::string::npos);
  CHECK(eval_with(w, "ok").status == Status::Correct);
  CHECK(w.restarts() == 1);  // not used again
  // A line for the next request's id is the forger's too, never the next candidate's.
  const EvalResult ahead = eval_with(w, "forge_ahead");
  CHECK(ahead.reason == "reply_forged");
  const EvalResult next = eval_with(w, "ok");
  CHECK(next.status == Status::Correct);
  CHECK(next.guards.empty());
}

TEST_CASE("a worker that asks to be replaced exits after its reply; the next evaluation gets a fresh one") {
  WorkerClient w(fake_options());
  CHECK(eval_with(w, "replace").status == Status::Correct);
  CHECK(eval_with(w, "ok").status == Status::Correct);
  CHECK(w.restarts() == 1);
}

TEST_CASE("a replacement worker is told its GPU, to join that GPU's timing lock before CUDA starts") {
  testing::TempDir dir("kagent-join-early");
  WorkerOptions o = fake_options();
  o.admission_folder = dir.str();
  o.env = {"KAGENT_FAKE_UUID=GPU-join", "KAGENT_FAKE_MARKERS=" + dir.str()};
  WorkerClient w(o);
  const std::string marker = dir.str() + "/joined_early";
  CHECK(eval_with(w, "replace").status == Status::Correct);
  CHECK_FALSE(fs::exists(marker));  // the first worker names the GPU itself
  CHECK(eval_with(w, "ok").status == Status::Correct);
  REQUIRE(w.restarts() == 1);
  std::ifstream in(marker);
  std::string uuid;
  std::getline(in, uuid);
  CHECK(uuid == "GPU-join");
}

namespace {

// A fake worker on a 10 GB GPU `uuid` whose admission ledger and markers live in `dir`; its
// notices go to `notices`.
WorkerOptions ledger_options(const testing::TempDir& dir, const std::string& uuid, std::vector<std::string>& notices) {
  WorkerOptions o = fake_options();
  o.admission_folder = (dir.path() / "ledger").string();
  o.env = {"KAGENT_FAKE_UUID=" + uuid, "KAGENT_FAKE_MEMORY=10000000000", "KAGENT_FAKE_MARKERS=" + dir.str()};
  o.notice = [&notices](const std::string& m) { notices.push_back(m); };
  return o;
}

}  // namespace

TEST_CASE("out of GPU memory while another process holds some: tried again with the GPU to itself") {
  testing::TempDir dir("kagent-admission");
  const std::string uuid = "GPU-fake-" + std::to_string(::getpid());
  std::vector<std::string> notices;
  const WorkerOptions o = ledger_options(dir, uuid, notices);
  WorkerClient w(o);
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
  // Another process's evaluation holds 5 GB for 1.5 s.
  GpuAdmission other(uuid, 10'000'000'000ULL, nullptr, o.admission_folder);
  auto held = std::make_unique<GpuAdmission::Ticket>(other.acquire({5'000'000'000ULL, false, 0, "other"}, {}));
  std::thread release([&] {
    std::this_thread::sleep_for(1500ms);
    held.reset();
  });
  const EvalResult r = w.evaluate("/dev/null", CandidateRef{"cuda", "oom_once", "op", ""});
  release.join();
  CHECK(r.status == Status::Correct);
  REQUIRE(r.isolation.retry);
  CHECK(r.isolation.retry->why == "shared_gpu_memory");
  CHECK(r.isolation.retry->first_reason == "evaluator_oom");
  CHECK(r.isolation.memory_wait_seconds > 0.5);
  CHECK(w.take_charges().empty());  // the other process's memory, no candidate's fault
  bool said = false;
  for (const auto& n : notices) said = said || n.find("waiting for GPU memory") != std::string::npos;
  CHECK_MESSAGE(said, "no notice of the wait");
}

TEST_CASE("a CUDA fault while another process used the GPU is tried again with the GPU to itself") {
  testing::TempDir dir("kagent-fault");
  const std::string uuid = "GPU-fault-" + std::to_string(::getpid());
  std::vector<std::string> notices;
  const WorkerOptions o = ledger_options(dir, uuid, notices);
  GpuAdmission other(uuid, 10'000'000'000ULL, nullptr, o.admission_folder);
  // Another process's evaluation holding GPU memory for `hold`: it shares the GPU meanwhile.
  const auto other_evaluates = [&](std::chrono::milliseconds hold) {
    auto held = std::make_shared<GpuAdmission::Ticket>(other.acquire({1'000'000'000ULL, false, 0, "other"}, {}));
    return std::thread([held, hold] {
      std::this_thread::sleep_for(hold);
      held->release();
    });
  };

  // `artifact` evaluated by a fresh client while another process evaluates for `hold`.
  const auto beside_other = [&](const char* artifact, std::chrono::milliseconds hold) {
    WorkerClient w(o);
    REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
    std::thread release = other_evaluates(hold);
    const EvalResult r = w.evaluate("/dev/null", CandidateRef{"cuda", artifact, "op", ""});
    release.join();
    CHECK(w.take_charges().empty());
    return r;
  };

  SUBCASE("a neighbour's fault: the second try, alone, is the verdict") {
    const EvalResult r = beside_other("fault_once", 1500ms);
    CHECK(r.status == Status::Correct);
    REQUIRE(r.isolation.retry);
    CHECK(r.isolation.retry->why == "gpu_fault_shared");
    CHECK(r.isolation.retry->first_reason == "cuda_fatal");
    CHECK(r.isolation.memory_wait_seconds > 0.5);  // alone: it waited for the other to finish
    bool said = false;
    for (const auto& n : notices) said = said || n.find("did not recur with the GPU to itself") != std::string::npos;
    CHECK_MESSAGE(said, "no notice of the retry");
  }
  SUBCASE("the candidate's own fault recurs alone and stays its verdict") {
    const EvalResult r = beside_other("fault", 300ms);
    CHECK(r.status == Status::RuntimeError);
    CHECK(r.reason == "cuda_fatal");
    REQUIRE(r.isolation.retry);
    CHECK(r.isolation.retry->why == "gpu_fault_shared");
  }
  SUBCASE("a fault with the GPU to itself is not tried again") {
    WorkerClient w(o);
    REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
    const EvalResult r = w.evaluate("/dev/null", CandidateRef{"cuda", "fault_once", "op", ""});
    CHECK(r.status == Status::RuntimeError);
    CHECK(r.reason == "cuda_fatal");
    CHECK_FALSE(r.isolation.retry);
  }
}

namespace {

// A fake worker on GPU "GPU-lock" whose ledger and timing lock live in `dir`.
WorkerOptions locked_options(const testing::TempDir& dir) {
  WorkerOptions o = fake_options();
  o.request_timeout = 300ms;
  o.admission_folder = (dir.path() / "ledger").string();
  o.env = {"KAGENT_FAKE_UUID=GPU-lock"};
  return o;
}

// Another worker's exclusive hold of the GPU's timing lock, for `hold`, on a thread of its own.
std::future<void> sibling_times(const std::string& path, std::chrono::milliseconds hold) {
  auto lock = std::make_shared<std::optional<GpuTimingLock>>(GpuTimingLock::open(path));
  REQUIRE(*lock);
  (*lock)->set(LockMode::Exclusive);
  return std::async(std::launch::async, [lock, hold] {
    std::this_thread::sleep_for(hold);
    (*lock)->set(LockMode::None);
  });
}

}  // namespace

TEST_CASE("a wait for the GPU's timing lock does not count against the candidate's timeout") {
  testing::TempDir dir("kagent-lock-wait");
  WorkerOptions o = locked_options(dir);
  WorkerClient w(o);
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));  // the client made the GPU's lock file
  const std::string path = gpu_timing_lock_path(o.admission_folder, "GPU-lock");
  auto sibling = sibling_times(path, 900ms);  // three timeouts long
  EvalResult r = eval_with(w, "timed");
  sibling.get();
  CHECK(r.status == Status::Correct);
  CHECK(r.isolation.timing_lock_wait_seconds > 0.5);
  CHECK(w.restarts() == 0);
  // Uncontended: no wait.
  EvalResult again = eval_with(w, "timed");
  CHECK(again.status == Status::Correct);
  CHECK(again.isolation.timing_lock_wait_seconds == 0);
}

TEST_CASE("the lock observer hears every change of the worker's hold, its waits and its end") {
  // What the pool's GpuLockUsage adds up (evaluation/gpu_lock_usage.h): with a sibling holding
  // the lock shared, the worker gets its own shared hold at once, then waits to time.
  testing::TempDir dir("kagent-lock-observer");
  WorkerOptions o = locked_options(dir);
  o.env.push_back("KAGENT_FAKE_LOCKED=1");  // shared for the request, exclusive for its timing
  o.request_timeout = 5s;
  create_gpu_timing_locks(o.admission_folder, {"GPU-lock"});  // the fake opens it as it starts
  std::mutex mu;
  std::vector<std::pair<LockMode, bool>> seen;
  o.lock_observer = [&](LockMode m, bool waiting) {
    std::lock_guard lock(mu);
    seen.emplace_back(m, waiting);
  };
  auto has = [&](LockMode m, bool waiting) {
    std::lock_guard lock(mu);
    return std::find(seen.begin(), seen.end(), std::pair{m, waiting}) != seen.end();
  };
  {
    WorkerClient w(o);
    REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
    auto sibling = std::make_shared<std::optional<GpuTimingLock>>(
        GpuTimingLock::open(gpu_timing_lock_path(o.admission_folder, "GPU-lock")));
    REQUIRE(*sibling);
    (*sibling)->set(LockMode::Shared);
    auto release = std::async(std::launch::async, [sibling] {
      std::this_thread::sleep_for(200ms);
      (*sibling)->set(LockMode::None);
    });
    CHECK(eval_with(w, "ok").status == Status::Correct);
    release.get();
    CHECK(has(LockMode::Shared, false));
    CHECK(has(LockMode::Exclusive, true));   // it waited for the sibling's shared hold to end
    CHECK(has(LockMode::Exclusive, false));
    std::lock_guard lock(mu);
    REQUIRE(!seen.empty());
    CHECK(seen.back() == std::pair{LockMode::None, false});  // the reply comes after the hold ends
    seen.clear();
  }
  // The worker stopped with its client: it holds nothing, and the observer hears it.
  CHECK(seen == std::vector<std::pair<LockMode, bool>>{{LockMode::None, false}});
}

TEST_CASE("a lock that is not had within its own limit ends the request as kagent's failure, not a timeout") {
  testing::TempDir dir("kagent-lock-limit");
  WorkerOptions o = locked_options(dir);
  o.lock_wait_limit = 400ms;
  WorkerClient w(o);
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
  auto sibling = sibling_times(gpu_timing_lock_path(o.admission_folder, "GPU-lock"), 1500ms);
  EvalResult r = eval_with(w, "timed");
  CHECK(r.status == Status::InternalError);
  CHECK(r.message.find("timing lock") != std::string::npos);
  CHECK(r.isolation.timing_lock_wait_seconds > 0.3);
  sibling.get();
  CHECK(eval_with(w, "timed").status == Status::Correct);
}

TEST_CASE("the processes that have a file open are told apart from those that do not") {
  testing::TempDir dir("kagent-file-users");
  const std::string path = dir.write("GPU-x.timing", "");
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const pid_t child = ::fork();  // before the file is opened: the child does not have it
  REQUIRE(child >= 0);
  if (child == 0) {
    char c;
    (void)!::read(go[0], &c, 1);
    ::_exit(0);
  }
  Fd mine(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(mine);
  const auto users = processes_with_file_open({::getpid(), child}, path);
  CHECK(users == std::set<pid_t>{::getpid()});
  CHECK(processes_with_file_open({::getpid()}, dir.str() + "/missing").empty());
  REQUIRE(::write(go[1], "x", 1) == 1);
  ::waitpid(child, nullptr, 0);
  ::close(go[0]);
  ::close(go[1]);
}

TEST_CASE("a waiting lock line without the request's nonce does not stop the watchdog") {
  // The candidate shares the worker's pipe: a forged "waiting" line would have paused its
  // timeout for up to lock_wait_limit. It is skipped, and the 1.5 s timeout holds.
  WorkerClient w(fake_options());
  const EvalResult r = eval_with(w, "forge_waiting");
  CHECK(r.status == Status::Timeout);
}

TEST_CASE("a wait ends once its holder has held the lock longer than any request may run, naming it") {
  // The holder's own client would have ended a request that long: one that still holds is stuck
  // (or nobody watches it), and a 30-minute wait behind it stalls every sibling silently.
  testing::TempDir dir("kagent-lock-holder");
  WorkerOptions o = locked_options(dir);
  o.lock_holder_limit = 700ms;
  std::vector<std::string> notices;
  o.notice = [&](const std::string& m) { notices.push_back(m); };
  WorkerClient w(o);
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
  auto sibling = sibling_times(gpu_timing_lock_path(o.admission_folder, "GPU-lock"), 4000ms);
  const auto start = std::chrono::steady_clock::now();
  const EvalResult r = eval_with(w, "timed");
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(r.status == Status::InternalError);
  CHECK(r.message.find("longer than any request may run") != std::string::npos);
  CHECK(r.message.find("pid " + std::to_string(::getpid())) != std::string::npos);  // the holder, named
  sibling.get();
  CHECK(eval_with(w, "timed").status == Status::Correct);
}
