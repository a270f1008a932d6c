// A stand-in for kagent-worker that misbehaves on request, so the client's crash
// classification is tested with real processes and real signals on a machine without a
// GPU (the real worker needs one to run a candidate). It speaks the same protocol:
// candidate.artifact names the fault (its file name): segv, abort, exit, hang, garbage, slow, ok; and, for the
// isolation tests:
//   poison     correct, but every later evaluation in this process is a problem_error (as a
//              CUDA generator left in graph-capture mode made "Model(...) failed")
//   replace    correct, with "replace": the worker exits after the reply
//   oom_once   evaluator_oom the first time (a marker file in $KAGENT_FAKE_MARKERS), then correct
//   broken     problem_error every time (a problem that is broken indeed)
//   fault_once runtime_error cuda_fatal with "replace" the first time (a marker file in
//              $KAGENT_FAKE_MARKERS), as a sibling process's kernel fault took this one's context
//              down; then correct
//   fault      runtime_error cuda_fatal with "replace" every time (the candidate's own fault)
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
// Started with $KAGENT_GPU_TIMING_LOCK_UUID (a replacement), it writes that UUID to
// $KAGENT_FAKE_MARKERS/joined_early where it has one, as the real worker joins that GPU's lock
// before CUDA starts.
// KAGENT_FAKE_LOCKED=1: it takes the GPU's timing lock as the real worker does (exclusive for a
// moment at start-up, shared for each request, exclusive for a "timing" part of each evaluation,
// its lock lines on the pipe), and these artifacts too:
//   fork       forks 4 children that sleep while the lock is held shared (a fork bomb's, or a
//              multiprocessing pool's), and kills them after the reply (as the sandbox's
//              monitor does at the end of each request)
//   alone      holds the lock exclusively for the whole request (as a baselines request did
//              before it held it only for its measurements)
//   die_shared forks a child in a session of its own (out of the process group the client
//              kills), then dies while it holds the lock shared
// With KAGENT_FAKE_LOCKED it also announces each phase as the real worker does (phase lines,
// protocol.h: prefetch, load, correctness, guards_before_timing under the shared hold, timing,
// guards_after_timing, profile under the exclusive one, state_check), for the phase budgets:
//   slow_load   3 s in load, the lock held shared ($KAGENT_FAKE_SLOW_MS: another length)
//   slow_timing 3 s in timing, the lock held exclusively (the same)
//   forge_phase in timing, phase lines the candidate could write: one without the nonce
//               ("state_check"), and with the nonce an earlier phase ("load") and the same one
//               again ("timing"), as if it had read the nonce from the process; then 3 s
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "common/json_lines.h"
#include "worker/protocol/protocol.h"

namespace {

// The real worker's use of the GPU's timing lock (worker/service/worker_service.cpp), its lock
// lines carrying the request's id and nonce.
struct Locked {
  int id = 0;
  std::string nonce;
  std::optional<kagent::GpuTimingLock> lock;

  void say(const kagent::protocol::LockEvent& e) const {
    auto line = kagent::protocol::lock_line(e);
    line["id"] = id;
    if (!nonce.empty()) line["nonce"] = nonce;
    kagent::write_json_line(4, line);
  }
  void open(const std::string& uuid) {
    const char* dir = std::getenv(kagent::kTimingLockDirEnv);
    if (!dir) return;
    kagent::GpuTimingLock::Hooks hooks;
    hooks.waiting = [this](kagent::LockMode m) { say({kagent::protocol::LockEvent::Kind::Waiting, m, 0, ""}); };
    hooks.changed = [this](kagent::LockMode m, double w) { say({kagent::protocol::LockEvent::Kind::Held, m, w, ""}); };
    lock = kagent::GpuTimingLock::open(kagent::gpu_timing_lock_path(dir, uuid), hooks);
  }
  kagent::GpuTimingLock* get() { return lock ? &*lock : nullptr; }
  // A phase line with the request's id and nonce (none: a line the candidate forged).
  void phase(const char* name, bool with_nonce = true) const {
    auto line = kagent::protocol::phase_line(name);
    line["id"] = id;
    if (with_nonce && !nonce.empty()) line["nonce"] = nonce;
    kagent::write_json_line(4, line);
  }
};

}  // namespace

int main() {
  nlohmann::json device = {{"available", true}, {"name", "fake"}};
  if (const char* uuid = std::getenv("KAGENT_FAKE_UUID")) device["uuid"] = uuid;
  if (const char* memory = std::getenv("KAGENT_FAKE_MEMORY")) device["memory_bytes"] = std::stoll(memory);
  const bool realistic = std::getenv("KAGENT_FAKE_LOCKED") != nullptr;
  const char* slow_ms = std::getenv("KAGENT_FAKE_SLOW_MS");
  const std::chrono::milliseconds slow(slow_ms ? std::atoi(slow_ms) : 3000);
  Locked locked;
  const char* joined = std::getenv(kagent::kTimingLockUuidEnv);
  const char* markers = std::getenv("KAGENT_FAKE_MARKERS");
  if (joined && markers) {
    std::FILE* f = std::fopen((std::string(markers) + "/joined_early").c_str(), "w");
    if (f) {
      std::fputs(joined, f);
      std::fclose(f);
    }
  }
  if (realistic) {
    locked.open(device.value("uuid", ""));
    const kagent::GpuTimingLock::Hold dram(locked.get(), kagent::LockMode::Exclusive);  // the DRAM measurement
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  nlohmann::json hello = {{"ok", true}, {"result", {{"device", device}, {"pid", ::getpid()}}}};
  if (locked.lock) hello["result"]["timing_lock"] = locked.lock->path();
  kagent::write_json_line(4, hello);
  kagent::JsonLineReader reader(3);
  bool poisoned = false;
  bool poisoned_errors = false;
  for (;;) {
    auto msg = reader.read(std::nullopt);
    if (msg.state != kagent::JsonLineReader::State::Message) return 0;
    const auto& req = msg.message;
    std::string fault = req.contains("candidate") ? req["candidate"].value("artifact", "ok") : "ok";
    // The client sends paths absolute (worker/client/request_paths.h): the fault is the file's name.
    fault = std::filesystem::path(fault).filename().string();
    std::printf("fake worker: %s\n", fault.c_str());
    std::fflush(stdout);
    if (realistic && req.contains("candidate")) {
      locked.id = req.value("id", 0);
      locked.nonce = req.value("nonce", "");
      std::vector<pid_t> children;
      // As the real worker: the problem's CPU share first with nothing held (prefetch), then the
      // lock shared for the GPU work that may overlap, exclusively from the timing to the end.
      locked.phase("prefetch");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      {
        const kagent::GpuTimingLock::Hold request(
            locked.get(), fault == "alone" ? kagent::LockMode::Exclusive : kagent::LockMode::Shared);
        locked.phase("load");
        if (fault == "slow_load") std::this_thread::sleep_for(slow);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        locked.phase("correctness");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        locked.phase("guards_before_timing");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (fault == "fork") {
          for (int i = 0; i < 4; ++i) {
            const pid_t p = ::fork();
            if (p == 0)
              for (;;) ::pause();
            if (p > 0) children.push_back(p);
          }
        }
        if (fault == "die_shared") {
          if (::fork() == 0) {
            ::setsid();  // out of the group: a candidate's escape, or a pool's daemon
            ::alarm(120);  // gone in the end, should nothing kill it
            for (;;) ::pause();
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          std::abort();
        }
        {
          // Taken before the timing phase starts, as Evaluation holds it from the timing to the end.
          const kagent::GpuTimingLock::Hold timing(locked.get(), kagent::LockMode::Exclusive);
          locked.phase("timing");
          if (fault == "slow_timing") std::this_thread::sleep_for(slow);
          if (fault == "forge_phase") {
            locked.phase("state_check", /*with_nonce=*/false);
            locked.phase("load");
            locked.phase("timing");
            std::this_thread::sleep_for(std::chrono::seconds(3));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          locked.phase("guards_after_timing");
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          locked.phase("profile");
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        locked.phase("state_check");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the state check, shared again
      }
      for (pid_t p : children) ::kill(p, SIGKILL);  // the sandbox's end of request
      for (pid_t p : children) ::waitpid(p, nullptr, 0);
    }
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
    bool fatal = fault == "fault";
    if (fault == "fault_once") {
      const std::string marker = std::string(std::getenv("KAGENT_FAKE_MARKERS")) + "/fault_once";
      fatal = !std::filesystem::exists(marker);
      if (fatal) std::ofstream(marker) << "1";
    }
    if (fatal) {
      result = {{"status", "runtime_error"}, {"reason", "cuda_fatal"},
                {"message", "CUDA error in the candidate; the worker is replaced"},
                {"runtime_error", "cudaStreamSynchronize(stream_) failed: unspecified launch failure"}};
      reply["replace"] = true;
    }
    reply["result"] = result;
    kagent::write_json_line(4, reply);
    if (fault == "replace" || fatal) return 0;
  }
}
