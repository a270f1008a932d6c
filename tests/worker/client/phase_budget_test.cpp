// Per-phase budgets (worker/client/phase_watch.h): the clocks' rules with made-up times, then
// the client against the fake worker's phase and lock lines, with real processes and a real
// timing lock: a phase past its wall or GPU budget is killed at about the budget and named; a
// wait for a sibling's lock is not charged; a forged phase line extends nothing; the defaults
// leave a normal evaluation alone.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include "result/policy.h"
#include "temp_dir.h"
#include "worker/client/phase_watch.h"
#include "worker/client/worker_client.h"

using namespace kagent;
using namespace std::chrono_literals;
using Kind = protocol::LockEvent::Kind;

namespace {

const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
std::chrono::steady_clock::time_point at(double s) {
  return t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}
protocol::LockEvent held(LockMode m) { return {Kind::Held, m, 0, ""}; }
protocol::LockEvent waiting(LockMode m) { return {Kind::Waiting, m, 0, ""}; }
PhaseBudgets budgets(std::initializer_list<std::tuple<const char*, std::optional<double>, std::optional<double>>> list) {
  PhaseBudgets b;
  for (const auto& [phase, wall, gpu] : list) b.phases[phase] = {wall, gpu};
  return b;
}

}  // namespace

TEST_CASE("a phase's wall clock stops while the worker waits for the timing lock") {
  PhaseWatch w(budgets({{"load", 1.0, std::nullopt}}));
  CHECK_FALSE(w.left(at(0)));  // no phase yet: nothing runs out
  REQUIRE(w.on_phase("load", at(0)));
  w.on_lock(waiting(LockMode::Shared), at(0.4));
  CHECK_FALSE(w.left(at(5)));  // a sibling's turn is not the candidate's
  CHECK_FALSE(w.overrun(at(5)));
  w.on_lock(held(LockMode::Shared), at(5));
  CHECK(w.wall_seconds(at(5.5)) == doctest::Approx(0.9));
  CHECK_FALSE(w.overrun(at(5.5)));
  CHECK(std::chrono::duration<double>(*w.left(at(5.5))).count() == doctest::Approx(0.1));
  const auto over = w.overrun(at(5.7));
  REQUIRE(over);
  CHECK(over->phase == "load");
  CHECK_FALSE(over->gpu);
  CHECK(over->budget_s == 1.0);
  CHECK(describe(*over) ==
        "the load phase ran for more than its budget of 1 s, waits for the GPU's timing lock not counted "
        "(--phase-budget load=1); killed");
}

TEST_CASE("a phase's GPU clock runs while the worker holds the lock, shared or exclusively") {
  PhaseWatch w(budgets({{"correctness", std::nullopt, 0.5}, {"timing", std::nullopt, 1.0}}));
  w.on_lock(held(LockMode::Shared), at(0));
  w.on_phase("correctness", at(0));
  CHECK(std::chrono::duration<double>(*w.left(at(0.2))).count() == doctest::Approx(0.3));
  w.on_lock(held(LockMode::None), at(0.3));  // the idle release: host work holds nothing
  CHECK_FALSE(w.left(at(10)));
  CHECK_FALSE(w.overrun(at(10)));
  w.on_lock(held(LockMode::Shared), at(10));
  const auto shared = w.overrun(at(10.25));
  REQUIRE(shared);
  CHECK(shared->gpu);
  CHECK_FALSE(shared->alone);
  CHECK(shared->spent_s == doctest::Approx(0.55));
  CHECK(describe(*shared) ==
        "the correctness phase held the GPU for more than its budget of 0.5 s (shared, which every timing of that GPU "
        "waits for) (--phase-gpu-budget correctness=0.5); killed");
  w.on_lock(waiting(LockMode::Exclusive), at(10));
  w.on_lock(held(LockMode::Exclusive), at(20));  // the wait: neither clock
  w.on_phase("timing", at(20));
  CHECK(std::chrono::duration<double>(*w.left(at(20.9))).count() == doctest::Approx(0.1));
  CHECK_FALSE(w.overrun(at(20.9)));
  const auto over = w.overrun(at(21.2));
  REQUIRE(over);
  CHECK(over->gpu);
  CHECK(over->alone);
  CHECK(over->spent_s == doctest::Approx(1.2));
  CHECK(describe(*over) ==
        "the timing phase held the GPU alone for more than its budget of 1 s (--phase-gpu-budget timing=1); killed");
  // Let go before the budget ran out: the clock stops with the hold.
  PhaseWatch v(budgets({{"timing", std::nullopt, 1.0}}));
  v.on_lock(held(LockMode::Exclusive), at(0));
  v.on_phase("timing", at(0));
  v.on_lock(held(LockMode::None), at(0.8));
  CHECK_FALSE(v.overrun(at(30)));
  CHECK_FALSE(v.left(at(30)));
  // Both budgets past: the one that ran out first is named.
  PhaseWatch both(budgets({{"timing", 2.0, 1.0}}));
  both.on_lock(held(LockMode::Exclusive), at(0));
  both.on_phase("timing", at(0));
  CHECK(both.overrun(at(3))->gpu);
}

TEST_CASE("a phase line starts only a later phase: an earlier, repeated or unknown one extends nothing") {
  PhaseWatch w(budgets({{"timing", std::nullopt, 1.0}, {"profile", std::nullopt, 5.0}}));
  w.on_lock(held(LockMode::Exclusive), at(0));
  REQUIRE(w.on_phase("timing", at(0)));
  CHECK_FALSE(w.on_phase("load", at(0.5)));    // no budget at all: would have freed the GPU clock
  CHECK_FALSE(w.on_phase("timing", at(0.6)));  // again: would have started it afresh
  CHECK_FALSE(w.on_phase("warp_speed", at(0.7)));
  CHECK(w.phase() == "timing");
  REQUIRE(w.overrun(at(1.1)));
  CHECK(w.overrun(at(1.1))->phase == "timing");
  CHECK(w.on_phase("profile", at(0.9)));  // later: the worker's own next phase
  CHECK_FALSE(w.overrun(at(1.1)));
}

namespace {

// A fake worker that takes the GPU's timing lock and announces its phases as the real one does.
WorkerOptions phased_options(const testing::TempDir& dir, PhaseBudgets b) {
  WorkerOptions o;
  o.worker_path = KAGENT_FAKE_WORKER;
  o.start_timeout = 10s;
  o.request_timeout = 5s;
  o.admission_folder = (dir.path() / "ledger").string();
  o.env = {"KAGENT_FAKE_UUID=GPU-phase", "KAGENT_FAKE_LOCKED=1"};
  o.phase_budgets = std::move(b);
  create_gpu_timing_locks(o.admission_folder, {"GPU-phase"});  // the fake opens it as it starts
  return o;
}

EvalResult eval_with(WorkerClient& w, const std::string& fault) {
  return w.evaluate("/dev/null", CandidateRef{"cuda", fault, "op", ""});
}

double seconds_of(const std::function<EvalResult()>& f, EvalResult& out) {
  const auto start = std::chrono::steady_clock::now();
  out = f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a phase past its wall budget is killed at about the budget, the verdict naming phase and budget") {
  testing::TempDir dir("kagent-phase-wall");
  WorkerClient w(phased_options(dir, budgets({{"load", 0.5, std::nullopt}})));
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
  EvalResult r;
  const double took = seconds_of([&] { return eval_with(w, "slow_load"); }, r);  // 3 s in load
  CHECK(r.status == Status::Timeout);
  CHECK(r.reason == reason::kPhaseBudget);
  CHECK(r.message.find("the load phase ran for more than its budget of 0.5 s") != std::string::npos);
  CHECK(r.message.find("(--phase-budget load=0.5)") != std::string::npos);
  CHECK(took >= 0.5);
  CHECK(took < 1.5);
  REQUIRE_FALSE(r.phases.empty());
  CHECK(r.phases.back().name == "load");
  CHECK(r.phases.back().failure == kFailureCandidate);
  CHECK(r.phases.back().seconds == doctest::Approx(0.5).epsilon(0.2));
  // Like every timeout under both policies, and the worker is replaced.
  CHECK(verdict_under(r, Policy::Strict).status == Status::Timeout);
  CHECK(verdict_under(r, Policy::KernelBench).status == Status::Timeout);
  CHECK(eval_with(w, "ok").status == Status::Correct);
  CHECK(w.restarts() == 1);
}

TEST_CASE("the GPU budget counts the lock held, shared too") {
  testing::TempDir dir("kagent-phase-gpu");
  WorkerOptions o = phased_options(dir, budgets({{"load", std::nullopt, 0.3}, {"timing", std::nullopt, 0.5}}));
  o.env.push_back("KAGENT_FAKE_SLOW_MS=1000");
  WorkerClient w(o);
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
  // A second in load under the shared hold: every timing of that GPU waited for it. Killed at
  // about the budget, the verdict saying it was shared.
  EvalResult shared;
  const double took_shared = seconds_of([&] { return eval_with(w, "slow_load"); }, shared);
  CHECK(shared.status == Status::Timeout);
  CHECK(shared.reason == reason::kPhaseBudget);
  CHECK(shared.message ==
        "the load phase held the GPU for more than its budget of 0.3 s (shared, which every timing of that GPU waits "
        "for) (--phase-gpu-budget load=0.3); killed");
  CHECK(took_shared >= 0.3);
  CHECK(took_shared < 0.8);
  // A second in timing with the GPU alone: killed at half of it.
  EvalResult r;
  const double took = seconds_of([&] { return eval_with(w, "slow_timing"); }, r);
  CHECK(r.status == Status::Timeout);
  CHECK(r.reason == reason::kPhaseBudget);
  CHECK(r.message ==
        "the timing phase held the GPU alone for more than its budget of 0.5 s (--phase-gpu-budget timing=0.5); killed");
  CHECK(took >= 0.5);
  CHECK(took < 0.95);
  CHECK(eval_with(w, "ok").status == Status::Correct);  // on a fresh worker
  CHECK(w.restarts() == 2);
}

TEST_CASE("a wait for a sibling's hold of the timing lock is not charged to the phase") {
  testing::TempDir dir("kagent-phase-wait");
  WorkerOptions o = phased_options(
      dir, budgets({{"prefetch", 0.3, 0.3}, {"guards_before_timing", 0.3, 0.3}, {"timing", 0.3, 0.3}}));
  WorkerClient w(o);
  REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
  // A sibling holds it shared for a second: the worker's own shared hold comes at once, its
  // exclusive one (taken in guards_before_timing, before the timing phase) waits the second out.
  auto sibling = std::make_shared<std::optional<GpuTimingLock>>(
      GpuTimingLock::open(gpu_timing_lock_path(o.admission_folder, "GPU-phase")));
  REQUIRE(*sibling);
  (*sibling)->set(LockMode::Shared);
  auto release = std::async(std::launch::async, [sibling] {
    std::this_thread::sleep_for(1s);
    (*sibling)->set(LockMode::None);
  });
  const EvalResult r = eval_with(w, "ok");
  release.get();
  CHECK(r.status == Status::Correct);
  CHECK(r.reason.empty());
  CHECK(r.isolation.timing_lock_wait_seconds > 0.5);
  CHECK(w.restarts() == 0);
}

TEST_CASE("a forged phase line extends neither a budget nor the request's timeout") {
  testing::TempDir dir("kagent-phase-forged");
  {
    // In timing, the candidate writes "state_check" without the nonce, then "load" and "timing"
    // with it: none ends the timing phase's GPU clock or starts it afresh.
    WorkerClient w(phased_options(dir, budgets({{"timing", std::nullopt, 0.5}})));
    REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
    EvalResult r;
    const double took = seconds_of([&] { return eval_with(w, "forge_phase"); }, r);  // 3 s in timing
    CHECK(r.status == Status::Timeout);
    CHECK(r.reason == reason::kPhaseBudget);
    CHECK(r.message.find("the timing phase held the GPU alone") != std::string::npos);
    CHECK(took < 1.5);
  }
  {
    // No budget at all: the phase lines leave the request's timeout as it was.
    WorkerOptions o = phased_options(dir, {});
    o.request_timeout = 1s;
    WorkerClient w(o);
    REQUIRE(std::holds_alternative<DeviceInfo>(w.hello()));
    EvalResult r;
    const double took = seconds_of([&] { return eval_with(w, "forge_phase"); }, r);
    CHECK(r.status == Status::Timeout);
    CHECK(r.reason.empty());
    CHECK(r.message.find("no verdict within 1 s") != std::string::npos);
    CHECK(took < 2.0);
  }
}

TEST_CASE("the default budgets leave a normal evaluation alone") {
  testing::TempDir dir("kagent-phase-default");
  WorkerOptions o = phased_options(dir, PhaseBudgets::defaults());
  CHECK(o.phase_budgets == WorkerOptions{}.phase_budgets);  // what every client gets unless told
  WorkerClient w(o);
  for (const char* fault : {"ok", "ok", "fork"}) {
    const EvalResult r = eval_with(w, fault);
    CHECK(r.status == Status::Correct);
    CHECK(r.reason.empty());
  }
  CHECK(w.restarts() == 0);
}
