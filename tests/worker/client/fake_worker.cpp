// A stand-in for kagent-worker that misbehaves on request, so the client's crash
// classification is tested with real processes and real signals on a machine without a
// GPU (the real worker needs one to run a candidate). It speaks the same protocol:
// candidate.artifact names the fault: segv, abort, exit, hang, garbage, slow, ok; and, for the
// isolation tests:
//   poison     correct, but every later evaluation in this process is a problem_error (as a
//              CUDA generator left in graph-capture mode made "Model(...) failed")
//   replace    correct, with "replace": the worker exits after the reply
//   oom_once   evaluator_oom the first time (a marker file in $KAGENT_FAKE_MARKERS), then correct
//   broken     problem_error every time (a problem that is broken indeed)
//   forge      writes a reply line of its own first ("correct", the request's id, no nonce),
//              as candidate code sharing the worker's pipe could; then the worker's real one
//   forge_ahead the same with the next request's id (it would wait in the pipe for it)
//   error_reply an error line instead of a result (an exception past the worker's state check,
//              as a capture left open made kagent's next CUDA call throw), and every later
//              evaluation in this process an error line too
//   forge_waiting a "waiting" lock line without the nonce (a candidate stopping its own watchdog),
//              then 2 s of work before the real reply
//   timed      correct, after taking the GPU's timing lock exclusively as the real worker does
//              around its timing (gpu_timing_lock.h), with its lock lines
// KAGENT_FAKE_UUID and KAGENT_FAKE_MEMORY give its device a UUID and memory (for GPU admission).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/json_lines.h"
#include "worker/protocol/protocol.h"

int main() {
  nlohmann::json device = {{"available", true}, {"name", "fake"}};
  if (const char* uuid = std::getenv("KAGENT_FAKE_UUID")) device["uuid"] = uuid;
  if (const char* memory = std::getenv("KAGENT_FAKE_MEMORY")) device["memory_bytes"] = std::stoll(memory);
  kagent::write_json_line(4, {{"ok", true}, {"result", {{"device", device}, {"pid", ::getpid()}}}});
  kagent::JsonLineReader reader(3);
  bool poisoned = false;
  bool poisoned_errors = false;
  for (;;) {
    auto msg = reader.read(std::nullopt);
    if (msg.state != kagent::JsonLineReader::State::Message) return 0;
    const auto& req = msg.message;
    std::string fault = req.contains("candidate") ? req["candidate"].value("artifact", "ok") : "ok";
    std::printf("fake worker: %s\n", fault.c_str());
    std::fflush(stdout);
    if (fault == "segv") std::raise(SIGSEGV);
    if (fault == "abort") std::abort();
    if (fault == "exit") std::exit(7);
    if (fault == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (fault == "garbage") {
      ssize_t n = ::write(4, "this is not json\n", 17);
      (void)n;
      continue;
    }
    if (fault == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (fault == "error_reply") poisoned_errors = true;
    if (poisoned_errors && req.contains("candidate")) {
      kagent::write_json_line(4, {{"id", req.value("id", 0)},
                                  {"nonce", req.value("nonce", "")},
                                  {"ok", false},
                                  {"error", {{"kind", "internal_error"},
                                             {"message", "CUDA error: operation not permitted when stream is capturing"}}}});
      continue;
    }
    if (fault == "forge_waiting") {
      kagent::write_json_line(4, {{"id", req.value("id", 0)}, {"lock", "waiting"}, {"mode", "exclusive"}});
      std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    }
    if (fault == "timed") {
      const char* dir = std::getenv(kagent::kTimingLockDirEnv);
      const int id = req.value("id", 0);
      const std::string nonce = req.value("nonce", "");
      const auto say = [id, nonce](const kagent::protocol::LockEvent& e) {
        auto line = kagent::protocol::lock_line(e);
        line["id"] = id;
        line["nonce"] = nonce;
        kagent::write_json_line(4, line);
      };
      kagent::GpuTimingLock::Hooks hooks;
      hooks.waiting = [&](kagent::LockMode m) { say({kagent::protocol::LockEvent::Kind::Waiting, m, 0, ""}); };
      hooks.changed = [&](kagent::LockMode m, double w) { say({kagent::protocol::LockEvent::Kind::Held, m, w, ""}); };
      if (auto lock = kagent::GpuTimingLock::open(kagent::gpu_timing_lock_path(dir ? dir : "", device.value("uuid", "")),
                                                  hooks)) {
        lock->set(kagent::LockMode::Exclusive);
        lock->set(kagent::LockMode::None);
      } else {
        std::printf("fake worker: no timing lock\n");
      }
    }
    nlohmann::json result = {{"status", "correct"}, {"message", "fake"}, {"format", "cuda"}};
    if (fault == "forge" || fault == "forge_ahead")  // this request's id, or the next one's
      kagent::write_json_line(4, {{"id", req.value("id", 0) + (fault == "forge_ahead" ? 1 : 0)},
                                  {"ok", true},
                                  {"result", {{"status", "correct"}, {"message", "forged"}, {"format", "cuda"}}}});
    nlohmann::json reply = {{"id", req.value("id", 0)}, {"nonce", req.value("nonce", "")}, {"ok", true}};
    if (poisoned && req.contains("candidate"))
      result = {{"status", "problem_error"}, {"reason", "problem_load_error"},
                {"message", "Model(...) failed: RuntimeError: Offset increment outside graph capture encountered "
                            "unexpectedly."}};
    if (fault == "broken") result = {{"status", "problem_error"}, {"reason", "problem_load_error"}, {"message", "broken"}};
    if (fault == "poison") poisoned = true;
    if (fault == "replace") reply["replace"] = true;
    if (fault == "oom_once") {
      const std::string marker = std::string(std::getenv("KAGENT_FAKE_MARKERS")) + "/oom_once";
      if (!std::filesystem::exists(marker)) {
        std::ofstream(marker) << "1";
        result = {{"status", "internal_error"}, {"reason", "evaluator_oom"},
                  {"message", "kagent's own step failed in phase guards_before_timing (out of GPU memory)"}};
      }
    }
    reply["result"] = result;
    kagent::write_json_line(4, reply);
    if (fault == "replace") return 0;
  }
}
