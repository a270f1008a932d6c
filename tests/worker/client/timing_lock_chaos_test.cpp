// The GPU's timing lock with real processes and no GPU: fake workers (fake_worker.cpp,
// KAGENT_FAKE_LOCKED) take it as kagent-worker does, and two "collect" processes of two
// clients each share it and the memory ledger, as the chaos test's (tests/gpu/chaos) do.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "worker/client/worker_client.h"
#include "worker/protocol/gpu_timing_lock.h"

using namespace kagent;
using namespace std::chrono_literals;

namespace {

WorkerOptions locked_fake(const std::string& folder, const std::string& uuid) {
  WorkerOptions o;
  o.worker_path = KAGENT_FAKE_WORKER;
  o.request_timeout = 3s;
  o.start_timeout = 10s;
  o.admission_folder = folder;
  o.env = {"KAGENT_FAKE_UUID=" + uuid, "KAGENT_FAKE_MEMORY=10000000000", "KAGENT_FAKE_LOCKED=1"};
  o.notice = [](const std::string&) {};
  return o;
}

// One "collect" process: `clients` workers, each evaluating `artifacts` in turn; exits 0 when
// every evaluation came back correct.
[[noreturn]] void collect(const std::string& folder, const std::string& uuid, int clients,
                          const std::vector<std::string>& artifacts) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      WorkerClient w(locked_fake(folder, uuid));
      for (size_t i = 0; i < artifacts.size(); ++i) {
        const std::string& a = artifacts[(i + static_cast<size_t>(c)) % artifacts.size()];
        const EvalResult r = w.evaluate("/dev/null", CandidateRef{"cuda", a, "op", ""});
        if (r.status != Status::Correct && a != "die_shared") {
          std::fprintf(stderr, "client %d: %s -> %s %s\n", c, a.c_str(), to_string(r.status).c_str(), r.message.c_str());
          ++wrong;
        }
      }
    });
  for (auto& t : threads) t.join();
  std::_Exit(wrong == 0 ? 0 : 1);  // die_shared is never correct: it dies
}

// Runs two collect processes at once; whether both ended within `limit` (a hang is killed).
bool two_collects(const std::string& folder, const std::string& uuid, const std::vector<std::string>& artifacts,
                  std::chrono::seconds limit, int* failed) {
  create_gpu_timing_locks(folder, {uuid});  // as the client does from NVML's list before the first start
  std::vector<pid_t> pids;
  for (int k = 0; k < 2; ++k) {
    const pid_t p = ::fork();
    REQUIRE(p >= 0);
    if (p == 0) collect(folder, uuid, 2, artifacts);
    pids.push_back(p);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool ended = true;
  *failed = 0;
  for (pid_t p : pids) {
    int status = 0;
    for (;;) {
      const pid_t r = ::waitpid(p, &status, WNOHANG);
      if (r == p) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ended = false;
        ::kill(p, SIGKILL);
        ::waitpid(p, &status, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++*failed;
  }
  return ended;
}

}  // namespace

TEST_CASE("two collect processes of two workers each share the timing lock and the ledger without a hang") {
  testing::TempDir dir("kagent-lock-chaos");
  const std::string uuid = "GPU-chaos-" + std::to_string(::getpid());
  const std::vector<std::string> artifacts = {"ok", "fork", "replace", "alone", "ok", "fork", "slow", "alone"};
  int failed = 0;
  const bool ended = two_collects((dir.path() / "ledger").string(), uuid,
                                  std::vector<std::string>(artifacts.begin(), artifacts.end()), 60s, &failed);
  CHECK(ended);
  CHECK(failed == 0);
}

TEST_CASE("a worker that dies holding the lock, its forked child keeping it, does not stall its siblings") {
  // flock belongs to the open file description, which fork shares: the child of a worker that
  // died holding the lock shared keeps it, and every sibling that wants it exclusively waits
  // (its watchdog stopped) for as long as that child lives. The siblings' clients find the
  // lock's taker gone and kill what keeps it.
  testing::TempDir dir("kagent-lock-chaos");
  const std::string uuid = "GPU-chaos-" + std::to_string(::getpid());
  int failed = 0;
  const auto start = std::chrono::steady_clock::now();
  const bool ended = two_collects((dir.path() / "ledger").string(), uuid, {"ok", "die_shared", "ok", "fork"}, 40s, &failed);
  CHECK(ended);
  CHECK(std::chrono::steady_clock::now() - start < 30s);
  CHECK(failed == 0);  // every evaluation but die_shared's came back correct
}
