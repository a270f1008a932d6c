// The client's classification of a misbehaving worker, with real processes (fake_worker).
#include <doctest/doctest.h>

#include "worker/client/worker_client.h"

using namespace kagent;
using namespace std::chrono_literals;

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
