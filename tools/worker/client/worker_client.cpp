#include "worker/client/worker_client.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "build_info.h"
#include "common/elapsed.h"
#include "common/paths.h"
#include "sandbox/cgroup_pids.h"
#include "sandbox/sandbox_section.h"
#include "sandbox/cuda_probe.h"
#include "sandbox/cuda_probe_memo.h"
#include "worker/client/python_bytecode.h"
#include "worker/client/request_paths.h"
#include "sandbox/process_table.h"
#include "sandbox/scratch_dir.h"
#include "sandbox/violation_verdict.h"
#include "common/sha256.h"
#include "worker/protocol/baseline_cache.h"
#include "worker/protocol/guard_options.h"

namespace kagent {

namespace fs = std::filesystem;

namespace {
// 128 random bits as hex: per request, from the OS's generator.
std::string fresh_nonce() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

// The watchdog's clock for one request: it stops from a worker's "waiting" lock line to the
// "held" line that follows (a sibling worker was timing, not this candidate), up to `lock_limit`
// of waiting in all.
class WatchdogClock {
 public:
  using clock = std::chrono::steady_clock;
  WatchdogClock(std::chrono::milliseconds timeout, std::chrono::milliseconds lock_limit)
      : deadline_(clock::now() + timeout), lock_limit_(lock_limit) {}

  // What is left: of the request's time, or, while the worker waits, of the lock's.
  std::chrono::milliseconds left() const {
    const auto now = clock::now();
    const auto left = waiting_ ? lock_limit_ - waited(now) : deadline_ - now;
    return std::chrono::duration_cast<std::chrono::milliseconds>(left);
  }
  bool waiting() const { return waiting_; }
  double waited_seconds() const { return std::chrono::duration<double>(waited(clock::now())).count(); }

  void on_lock(const protocol::LockEvent& e) {
    const auto now = clock::now();
    if (e.kind == protocol::LockEvent::Kind::Waiting) {
      if (!waiting_) waiting_since_ = now;
      waiting_ = true;
      return;
    }
    if (!waiting_) return;
    deadline_ += now - waiting_since_;
    waited_ += now - waiting_since_;
    waiting_ = false;
  }

 private:
  clock::duration waited(clock::time_point now) const {
    return waited_ + (waiting_ ? now - waiting_since_ : clock::duration::zero());
  }
  clock::time_point deadline_;
  std::chrono::milliseconds lock_limit_;
  clock::duration waited_ = clock::duration::zero();
  bool waiting_ = false;
  clock::time_point waiting_since_;
};

}  // namespace

std::string default_worker_path() {
  if (const char* env = std::getenv("KAGENT_WORKER")) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path next = self.parent_path() / "kagent-worker";
    if (fs::exists(next)) return next.string();
  }
  return (fs::path(build::kBinaryDir) / "kagent-worker").string();
}

WorkerClient::WorkerClient(WorkerOptions opts) : opts_(std::move(opts)) {
  if (opts_.worker_path.empty()) opts_.worker_path = default_worker_path();
  if (opts_.log_path.empty()) {
    const fs::path tmp = fs::temp_directory_path();
    // Unnamed: it goes when its last descriptor closes (kagent's and the workers'), however kagent
    // ends. Its /proc/self/fd path works in this process and in a child before exec (the worker
    // opens it as its output there), where the descriptor is still open. A named file where the
    // temporary folder's filesystem cannot make one (O_TMPFILE is refused).
    log_fd_ = Fd(::open(tmp.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (log_fd_) {
      opts_.log_path = fmt::format("/proc/self/fd/{}", log_fd_.get());
    } else {
      opts_.log_path =
          (tmp / fmt::format("kagent-worker-{}-{}.log", ::getpid(), reinterpret_cast<uintptr_t>(this))).string();
      own_log_ = true;
    }
  }
}

WorkerClient::~WorkerClient() {
  // A worker that is idle exits on its own when asked; one that does not answer at once is
  // killed with its process group by stop().
  if (proc_ && proc_->running() && reader_) (void)request(protocol::ShutdownRequest{}, std::chrono::milliseconds(2000));
  stop();
  if (own_log_) {
    std::error_code ec;
    fs::remove(opts_.log_path, ec);
  }
}

void WorkerClient::stop() {
  reader_.reset();
  const bool was_running = proc_ != nullptr;
  proc_.reset();  // RAII: kills the process group
  if (was_running && opts_.lock_observer) opts_.lock_observer(LockMode::None, false);  // a dead worker holds nothing
  // What a candidate started outside the group (setpgid, setsid) still runs as the worker's
  // own uid, which nothing else uses.
  if (sandbox_.is_object() && sandbox_.value("uid_unique", false))
    sandbox::kill_processes_of_uid(sandbox_.value("uid", 0u));
  // The worker's pids cgroup (sandbox/cgroup_pids.h): its monitor, killed with the group,
  // could not remove it.
  if (was_running && sandbox_.is_object() && sandbox_.contains("cgroup"))
    sandbox::kill_and_remove_pids_cgroup(sandbox_.value("cgroup", ""));
  if (!scratch_.empty()) {
    // Not fs::remove_all: it stops at its first error (the monitor may be removing the same tree
    // when the group's kill reaches it), and in a process that links libtorch the name resolves to
    // the wheel's own copy (tests/support/temp_dir.h). This removes all it can.
    sandbox::remove_tree(scratch_);
    scratch_.clear();
  }
}

std::string WorkerClient::log_tail(size_t bytes) const {
  std::ifstream in(opts_.log_path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  size_t from = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string s(size - from, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

std::optional<WorkerError> WorkerClient::ensure_started() {
  if (proc_ && proc_->running()) return std::nullopt;
  return start_once();
}

std::optional<WorkerError> WorkerClient::start_once() {
  stop();
  if (!fs::exists(opts_.worker_path))
    return WorkerError{"worker_start", "kagent-worker not found at " + opts_.worker_path + " (build it, or set KAGENT_WORKER)"};
  if (!policy_) {
    try {
      policy_ = opts_.sandbox ? *opts_.sandbox : sandbox::SandboxPolicy::from_environment();
    } catch (const std::invalid_argument& e) {
      return WorkerError{"worker_start", e.what()};
    }
  }
  // This boot's probe answer, where an earlier process found it: no probe child, no second CUDA
  // start (sandbox/cuda_probe_memo.h).
  if (!cuda_checked_ && policy_->enabled && !opts_.cuda_probe_memo.empty()) {
    if (probe_key_.empty()) probe_key_ = sandbox::cuda_probe_key(*policy_);
    if (auto memo = sandbox::read_cuda_probe_memo(opts_.cuda_probe_memo, probe_key_)) {
      policy_before_memo_ = *policy_;
      for (const auto& layer : memo->left_out) policy_->disabled.insert(layer);
      cuda_fallback_ = memo->fallback;
      cuda_checked_ = true;
    }
  }
  SpawnOptions so;
  so.argv = {opts_.worker_path};
  so.output_file = opts_.log_path;
  so.protocol_pipes = true;
  so.env_set = opts_.env;
  if (!opts_.pycache.empty()) {
    if (!bytecode_ready_) {
      std::string why;
      const auto asked = std::chrono::steady_clock::now();
      bytecode_ready_ = ensure_worker_bytecode(worker_python(), opts_.pycache, opts_.start_timeout, &why);
      startup_["bytecode"] = seconds_since(asked);
      if (!*bytecode_ready_) notice("the worker's Python compiles torch from source (no bytecode cache): " + why);
    }
    if (*bytecode_ready_) so.env_set.push_back("PYTHONPYCACHEPREFIX=" + absolute_path(opts_.pycache));
  }
  if (opts_.gpu) so.env_set.push_back(fmt::format("CUDA_VISIBLE_DEVICES={}", *opts_.gpu));
  sandbox::SandboxPolicy policy = *policy_;
  if (policy.enabled) {
    // A fresh scratch folder per worker process: nothing a candidate left there survives it.
    fs::path parent = policy.scratch.empty() ? fs::path(sandbox::default_scratch_parent(fs::temp_directory_path().string()))
                                             : fs::path(policy.scratch);
    std::error_code ec;
    fs::create_directories(parent, ec);
    std::string pattern = (parent / "kagent-worker-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      return WorkerError{"worker_start", fmt::format("cannot make a scratch folder in {}: {}", parent.string(),
                                                     std::strerror(errno))};
    scratch_ = policy.scratch = pattern;
    policy.scratch_disposable = true;  // the worker's monitor removes it even when this process dies first
    policy.orchestrator_pid = ::getpid();  // the monitor watches this process: its end ends the worker
  }
  for (auto& kv : policy.to_environment()) so.env_set.push_back(std::move(kv));
  std::vector<std::string> lock_files;
  if (opts_.timing_lock) {
    // The sandboxed worker only opens its GPU's lock file: made here first. Before the first
    // hello its GPU's UUID is not known: every GPU's of the machine.
    lock_files = create_gpu_timing_locks(lock_folder(), device_.uuid.empty() ? GpuWatch::machine_uuids()
                                                                             : std::vector<std::string>{device_.uuid});
    so.env_set.push_back(std::string(kTimingLockDirEnv) + "=" + absolute_path(lock_folder()));
    // A replacement joins its GPU's lock before CUDA starts (worker_service.h).
    if (!device_.uuid.empty()) so.env_set.push_back(std::string(kTimingLockUuidEnv) + "=" + device_.uuid);
  }
  if (cuda_checked_) so.env_set.push_back(std::string(sandbox::kCudaCheckedEnv) + "=1");
  sandbox_ = nlohmann::json::object();
  const auto spawned = std::chrono::steady_clock::now();
  try {
    proc_ = std::make_unique<Subprocess>(so);
  } catch (const std::exception& e) {
    return WorkerError{"worker_start", e.what()};
  }
  reader_ = std::make_unique<JsonLineReader>(proc_->reply_fd());
  ++restarts_;
  candidates_in_worker_ = 0;
  nonces_.clear();
  answers_in_worker_.clear();
  // The worker measures its GPU's DRAM bandwidth with the timing lock held: its lock lines
  // come first, and a wait for the lock does not count against the start.
  WatchdogClock start_clock(opts_.start_timeout, opts_.lock_wait_limit);
  LockWatch watch = lock_watch(lock_files);
  JsonLineReader::Result hello;
  std::string lock_trouble;
  for (;;) {
    const auto left = start_clock.left();
    if (left.count() <= 0) {
      hello = {JsonLineReader::State::Timeout, {}};
      break;
    }
    // While it waits for the lock: a look at who holds it every second.
    hello = reader_->read(start_clock.waiting() ? std::min(left, std::chrono::milliseconds(1000)) : left);
    if (hello.state == JsonLineReader::State::Timeout) {
      if (!start_clock.waiting()) break;
      auto look = watch.look(start_clock.waited_seconds());
      for (const auto& n : look.notices) notice("worker start: " + n);
      if (look.give_up) {
        lock_trouble = *look.give_up;
        break;
      }
      continue;
    }
    const auto lock = hello.state == JsonLineReader::State::Message ? protocol::lock_event_of(hello.message)
                                                                    : std::nullopt;
    if (!lock) break;
    start_clock.on_lock(*lock);
  }
  if (hello.state != JsonLineReader::State::Message) {
    std::string how = !lock_trouble.empty()                          ? lock_trouble
                      : start_clock.waiting()                        ? "waited too long for the GPU's timing lock"
                      : hello.state == JsonLineReader::State::Timeout ? "did not answer in time"
                                                                      : "died while starting";
    stop();
    return WorkerError{"worker_start", "kagent-worker " + how + ": " + log_tail(600)};
  }
  if (!hello.message.value("ok", false)) {
    stop();
    return WorkerError{"worker_start", hello.message["error"].value("message", "worker failed to start")};
  }
  const auto reply = hello.message["result"].get<protocol::HelloReply>();
  // A memo's answer that no longer holds (no device where the machine has one): forgotten, and
  // this start made again with a probe.
  if (policy_before_memo_ && !reply.device.available && sandbox::gpu_nodes_present()) {
    std::error_code ec;
    fs::remove(opts_.cuda_probe_memo, ec);
    policy_ = std::exchange(policy_before_memo_, std::nullopt);
    cuda_fallback_ = nullptr;
    cuda_checked_ = false;
    return start_once();
  }
  device_ = reply.device;
  sandbox_ = reply.sandbox;
  if (!startup_.contains("worker_start"))
    startup_.update({{"worker_start", seconds_since(spawned)},
                     {"steps", reply.startup}});
  timing_lock_ = reply.timing_lock;
  // Its replacements find the file of the GPU it named, whatever NVML lists.
  if (opts_.timing_lock && device_.available && !device_.uuid.empty()) create_gpu_timing_locks(lock_folder(), {device_.uuid});
  // The worker probed which filesystem layers CUDA works under (sandbox/cuda_probe.h): its
  // replacements start with that answer and need not probe again.
  if (device_.available && policy_->enabled) {
    if (sandbox_.contains("cuda_fallback")) {
      cuda_fallback_ = sandbox_["cuda_fallback"];
      for (const auto& layer : cuda_fallback_.value("left_out", std::vector<std::string>{}))
        policy_->disabled.insert(layer);
    } else if (!cuda_fallback_.is_null()) {
      sandbox_["cuda_fallback"] = cuda_fallback_;  // still why those layers are left out
    }
    cuda_checked_ = true;
    if (sandbox_.contains("cuda_probe_seconds") && !probe_key_.empty())  // this worker probed: kept for the boot
      sandbox::write_cuda_probe_memo(
          opts_.cuda_probe_memo, probe_key_,
          {cuda_fallback_.is_object() ? cuda_fallback_.value("left_out", std::vector<std::string>{}) : std::vector<std::string>{},
           cuda_fallback_});
  }
  if (policy.allows(sandbox::mechanism::kWatchdog)) sandbox_["memory_watchdog"] = {{"limit_bytes", policy.memory_bytes}};
  // The properties this run requires (KAGENT_SANDBOX_REQUIRE): a worker that holds one with no
  // mechanism is refused before any candidate runs in it.
  try {
    const auto required = sandbox::required_properties(std::getenv("KAGENT_SANDBOX_REQUIRE"));
    if (const std::string unmet = sandbox::unmet_requirement(sandbox::result_section(sandbox_, std::nullopt), required);
        !unmet.empty()) {
      stop();
      return WorkerError{reason::kSandboxUnmet, unmet};
    }
  } catch (const std::invalid_argument& e) {
    stop();
    return WorkerError{"worker_start", e.what()};
  }
  if (!gpu_watch_tried_ && device_.available && opts_.contention_poll.count() > 0) {
    gpu_watch_tried_ = true;
    gpu_watch_ = GpuWatch::open(device_.uuid);
  }
  if (!admission_ && device_.available && opts_.admission && !device_.uuid.empty() && device_.memory_bytes > 0)
    admission_ = std::make_unique<GpuAdmission>(device_.uuid, static_cast<uint64_t>(device_.memory_bytes), gpu_watch_.get(),
                                                opts_.admission_folder.empty() ? default_admission_folder()
                                                                               : opts_.admission_folder);
  return std::nullopt;
}

std::string WorkerClient::lock_folder() const {
  return opts_.admission_folder.empty() ? default_admission_folder() : opts_.admission_folder;
}

LockWatch WorkerClient::lock_watch(std::vector<std::string> paths) const {
  LockWatch::Options o;
  o.holder_limit = opts_.lock_holder_limit.count() > 0
                       ? opts_.lock_holder_limit
                       : opts_.start_timeout + opts_.request_timeout + opts_.kernelbench_build_allowance;
  o.worker_path = opts_.worker_path;
  return LockWatch(std::move(paths), o);
}

void WorkerClient::notice(const std::string& message) const {
  if (opts_.notice) opts_.notice(message);
  else std::fprintf(stderr, "kagent: %s\n", message.c_str());
}

std::optional<GpuAdmission::Ticket> WorkerClient::admit(const std::string& what, const std::string& problem_path,
                                                        bool exclusive) {
  if (!admission_ || !proc_) return std::nullopt;
  const auto footprint = footprints_.find(problem_path);
  AdmissionRequest req;
  req.bytes = memory_need(footprint == footprints_.end() ? 0 : footprint->second);
  req.exclusive = exclusive;
  req.worker = proc_->pid();
  req.what = what + " " + fs::path(problem_path).stem().string();
  return admission_->acquire(req, [this](const std::string& m) { notice(m); });
}

std::set<pid_t> WorkerClient::own_processes() const {
  std::set<pid_t> own;
  if (!proc_) return own;
  own.insert(proc_->pid());
  for (pid_t p : sandbox::descendants_of(proc_->pid())) own.insert(p);
  return own;
}

template <class Request>
WorkerClient::Reply WorkerClient::request(const Request& req, std::chrono::milliseconds timeout,
                                          ContentionRecorder* contention, const PhaseBudgets* phases) {
  const int id = next_id_++;
  // The worker echoes a nonce that only the request carried: a reply line that candidate code
  // writes on the shared pipe ("correct", any speedup) cannot guess it.
  const std::string nonce = fresh_nonce();
  // A genuine reply to an abandoned request carries an earlier one; a few dozen back is plenty
  // (a request that times out retires its worker).
  nonces_.push_back(nonce);
  if (nonces_.size() > 64) nonces_.pop_front();
  std::string forged;
  try {
    nlohmann::json line = protocol::request_line(req, id);
    line["nonce"] = nonce;
    write_json_line(proc_->request_fd(), line);
  } catch (const std::exception& e) {
    auto exit = proc_->wait(std::chrono::milliseconds(2000));
    return {Reply::Kind::Died, {}, exit ? exit->describe() : e.what(), exit};
  }
  WatchdogClock watchdog(timeout, opts_.lock_wait_limit);
  std::optional<PhaseWatch> phase_watch;
  if (phases) phase_watch.emplace(*phases);
  // The file its hello named; a worker that says it waits has one: its GPU's, in our folder.
  LockWatch watch = lock_watch({!timing_lock_.empty() ? timing_lock_ : gpu_timing_lock_path(lock_folder(), device_.uuid)});
  lock_waited_ = 0;
  const bool watch_memory = policy_ && policy_->allows(sandbox::mechanism::kWatchdog);
  const bool watch_gpu = contention != nullptr && gpu_watch_;
  const auto poll = watch_gpu && !watch_memory ? opts_.contention_poll
                    : watch_gpu                ? std::min(opts_.memory_poll, opts_.contention_poll)
                                               : opts_.memory_poll;
  auto next_look = std::chrono::steady_clock::now();
  for (;;) {
    lock_waited_ = watchdog.waited_seconds();
    const auto left = watchdog.left();
    if (left.count() <= 0)
      return {Reply::Kind::Timeout, {},
              watchdog.waiting() ? fmt::format("the worker waited {:.0f} s for the GPU's timing lock", lock_waited_)
                                 : std::string()};
    const auto now = std::chrono::steady_clock::now();
    if (phase_watch)
      if (auto over = phase_watch->overrun(now)) return {Reply::Kind::Timeout, {}, {}, {}, forged, std::move(over)};
    JsonLineReader::Result msg;
    try {
      // Short reads while the memory watchdog runs: it looks at the worker between them; and
      // while the worker waits for the timing lock, at who holds it.
      auto wait = watch_memory || watch_gpu ? std::min(left, poll) : left;
      if (watchdog.waiting()) wait = std::min(wait, std::chrono::milliseconds(1000));
      // Woken when the phase's budget runs out (a millisecond at least: no busy loop).
      if (const auto budget = phase_watch ? phase_watch->left(now) : std::nullopt)
        wait = std::min(wait, std::max(std::chrono::ceil<std::chrono::milliseconds>(*budget), std::chrono::milliseconds(1)));
      msg = reader_->read(wait);
    } catch (const std::exception& e) {  // garbage on the protocol pipe
      return {Reply::Kind::Died, {}, e.what()};
    }
    if (msg.state == JsonLineReader::State::Timeout) {
      if (watchdog.waiting()) {
        auto look = watch.look(watchdog.waited_seconds());
        for (const auto& n : look.notices) notice(n);
        if (look.give_up) return {Reply::Kind::Timeout, {}, *look.give_up};
      }
      if (watch_gpu && std::chrono::steady_clock::now() >= next_look) {
        contention->look(own_processes());
        next_look = std::chrono::steady_clock::now() + opts_.contention_poll;
      }
      if (watch_memory) {
        // The worker, its monitor and everything a candidate forked, orphans included.
        if (auto held = sandbox::tree_memory_over(proc_->pid(), policy_->memory_bytes))
          return {Reply::Kind::MemoryLimit, {},
                  fmt::format("the worker held {} MiB of host memory, over the sandbox's limit of {} MiB", *held >> 20,
                              policy_->memory_bytes >> 20)};
      }
      continue;
    }
    if (msg.state == JsonLineReader::State::Closed) {
      auto exit = proc_->wait(std::chrono::milliseconds(5000));
      return {Reply::Kind::Died, {}, exit ? exit->describe() : "closed its pipe", exit};
    }
    // A line without a nonce this worker was sent is not the worker's, whatever its id (lines
    // for later ids would otherwise wait in the pipe and be charged to the next candidate, and a
    // forged "waiting" lock line would stop the watchdog's clock).
    // Read without a throw: the line may be anyone's, with any "nonce" in it.
    const auto n = msg.message.is_object() ? msg.message.find("nonce") : msg.message.end();
    const std::string got = n != msg.message.end() && n->is_string() ? n->get<std::string>() : "";
    if (std::find(nonces_.begin(), nonces_.end(), got) == nonces_.end()) {
      if (forged.empty()) forged = msg.message.dump().substr(0, 300);
      continue;  // the worker's own reply is still to come
    }
    if (msg.message.value("id", -1) != id || got != nonce) continue;  // a stale reply
    if (const auto phase = protocol::phase_of(msg.message)) {
      if (phase_watch) phase_watch->on_phase(*phase, std::chrono::steady_clock::now());
      continue;
    }
    if (const auto lock = protocol::lock_event_of(msg.message)) {
      watchdog.on_lock(*lock);
      if (phase_watch) phase_watch->on_lock(*lock, std::chrono::steady_clock::now());
      if (opts_.lock_observer) {
        const bool waiting = lock->kind == protocol::LockEvent::Kind::Waiting;
        opts_.lock_observer(lock->kind == protocol::LockEvent::Kind::Broken ? LockMode::None : lock->mode, waiting);
      }
      if (lock->kind == protocol::LockEvent::Kind::Broken) {
        timing_lock_.clear();  // this worker's timings are unlocked from now on: watched as such
        if (contention) contention->lock_broken();
      } else if (lock->kind == protocol::LockEvent::Kind::Held && contention) {
        contention->exclusive(lock->mode == LockMode::Exclusive, own_processes());
      }
      continue;
    }
    if (msg.message.value("ok", false)) return {Reply::Kind::Ok, msg.message, {}, {}, forged};
    return {Reply::Kind::Error, msg.message, {}, {}, forged};
  }
}

std::variant<DeviceInfo, WorkerError> WorkerClient::hello() {
  if (auto err = ensure_started()) return *err;
  return device_;
}

std::variant<ProblemSpec, WorkerError> WorkerClient::load_problem(const std::string& path) {
  if (auto err = ensure_started()) return *err;
  const int ran_before = candidates_in_worker_;
  const auto started = std::chrono::steady_clock::now();
  std::optional<GpuAdmission::Ticket> ticket = admit("load", path, false);
  Reply r = request(protocol::LoadProblemRequest{absolute_path(path)}, opts_.start_timeout);
  ticket.reset();
  if (!startup_.contains("problem_load"))
    startup_["problem_load"] = seconds_since(started);
  // A problem is never called broken by a worker that ran candidates: one may have broken it.
  if (r.kind != Reply::Kind::Ok && ran_before > 0) {
    stop();
    if (auto err = ensure_started()) return *err;
    ticket = admit("load", path, false);
    r = request(protocol::LoadProblemRequest{absolute_path(path)}, opts_.start_timeout);
  }
  switch (r.kind) {
    case Reply::Kind::Ok: return r.body["result"].get<ProblemSpec>();
    case Reply::Kind::Error:
      return WorkerError{r.body["error"].value("kind", "error"), r.body["error"].value("message", "")};
    case Reply::Kind::Timeout:
      stop();
      return WorkerError{"problem_load_error", "loading the problem did not finish in time"};
    case Reply::Kind::Died:
    case Reply::Kind::MemoryLimit:
      stop();
      return WorkerError{"problem_load_error", "the worker died loading the problem (" + r.detail + "): " + log_tail(600)};
  }
  return WorkerError{"internal_error", "unreachable"};
}

void WorkerClient::prepare(const std::string& path, bool compile_warm) {
  if (ensure_started()) return;
  const auto started = std::chrono::steady_clock::now();
  // A warm-up is worth its time only at once: while others hold the GPU's memory it is left out.
  std::optional<GpuAdmission::Ticket> ticket;
  if (admission_) {
    const auto footprint = footprints_.find(path);
    ticket = admission_->try_acquire({memory_need(footprint == footprints_.end() ? 0 : footprint->second), false,
                                      proc_->pid(), "prepare " + fs::path(path).stem().string()});
    if (!ticket) return;
  }
  Reply r = request(protocol::PrepareRequest{absolute_path(path), compile_warm}, opts_.request_timeout);
  if (!startup_.contains("prepare"))
    startup_["prepare"] = seconds_since(started);
  // A hang or death here is the problem's own; the evaluation starts a fresh worker and says so.
  if (r.kind != Reply::Kind::Ok && r.kind != Reply::Kind::Error) stop();
}

namespace {

// The orchestrator alone writes the baseline cache, from what the worker measured (never
// what it read from the cache): candidate code in the worker cannot forge its baselines.
void store_baselines(const std::string& problem_path, const DeviceInfo& device, const EvalOptions& options,
                     const Timing& t) {
  if (options.cache_dir.empty() || t.baseline_cache_hit || (!t.eager && !t.compiled)) return;
  // Measured while another process used the GPU: a slowdown with little noise, which no
  // stopping rule sees. Never cached; the next measurement on an idle GPU is.
  if (t.contention && t.contention->shared) return;
  BaselineEntry entry{t.eager, t.compiled, {}};
  // Asked for and absent means torch.compile failed; the entry says so, so that it is not
  // retried on every evaluation (the reply does not carry the error text).
  if (options.compiled_baseline && !t.compiled) entry.compiled_error = "torch.compile failed when these baselines were measured";
  try {
    write_baselines(baseline_cache_file(sha256_file_hex(problem_path), device, options), entry);
  } catch (const std::exception&) {
    // an unwritable cache only costs a measurement next time
  }
}

}  // namespace

std::optional<Timing> WorkerClient::baselines(const std::string& problem_path, const EvalOptions& options) {
  if (ensure_started()) return std::nullopt;
  Reply r;
  GpuContention seen;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int ran_before = candidates_in_worker_;
    std::optional<GpuAdmission::Ticket> ticket = admit("baselines", problem_path, false);
    ContentionRecorder contention(gpu_watch_.get(), timing_lock_);
    contention.start(own_processes());
    r = request(protocol::BaselinesRequest{absolute_path(problem_path), with_absolute_paths(options)},
                opts_.request_timeout, &contention);
    seen = contention.finish(own_processes());
    if (r.kind == Reply::Kind::Ok) break;
    if (r.kind != Reply::Kind::Error || ran_before > 0) stop();  // hung, died, or maybe broken by a candidate
    // Tried again once on a fresh worker when one that ran candidates failed.
    if (ran_before == 0 || attempt == 1 || ensure_started()) return std::nullopt;
  }
  if (r.kind != Reply::Kind::Ok) return std::nullopt;
  const auto b = r.body["result"].get<protocol::BaselinesReply>();
  Timing t;
  t.eager = b.eager;
  t.compiled = b.compiled;
  t.baseline_cache_hit = b.cache_hit;
  t.baseline_recheck = b.recheck;
  if (gpu_watch_) t.contention = seen;
  store_baselines(problem_path, device_, options, t);
  return t;
}

namespace {

// A verdict that a previous candidate in the same worker, or another process's memory, could
// have caused rather than this candidate or this problem.
bool suspect(const EvalResult& r) {
  if (r.status == Status::ProblemError) return true;
  if (r.status == Status::InternalError) return r.reason != reason::kNoGpu && r.reason != "worker_start";
  return r.status == Status::RuntimeError && r.reason == reason::kCandidateOom;
}

// Candidate code wrote a reply line of its own on the worker's pipe (it shares the process):
// whatever the worker's own verdict, the candidate tried to forge one.
void reject_forged(EvalResult& r, const std::string& line) {
  GuardFinding f{worker::guard::kReplyForged, kGuardReject,
                 "a reply line without the request's nonce came on the worker's pipe before its own reply: " + line};
  overrule(r, {Status::Rejected, f.name, "rejected by guard " + f.name + ": " + f.message}, Status::Correct);
  r.guards.push_back(std::move(f));
}

}  // namespace

bool cuda_fault(const EvalResult& r) { return r.status == Status::RuntimeError && r.reason == reason::kCudaFatal; }

bool fault_beside_others(const EvalResult& r, bool shared) { return shared && cuda_fault(r); }

namespace {

bool out_of_memory(const EvalResult& r) {
  return r.reason == reason::kCandidateOom || r.reason == reason::kEvaluatorOom ||
         r.message.find("out of memory") != std::string::npos ||
         r.runtime_error.find("CUDA out of memory") != std::string::npos;
}

}  // namespace

EvalResult WorkerClient::evaluate(const std::string& problem_path, const CandidateRef& candidate,
                                  const EvalOptions& options, const std::string& label,
                                  std::optional<double> trusted_eager_ms) {
  const std::string name = !label.empty() ? label : candidate.format == "cuda" ? candidate.artifact : candidate.path;
  // A KernelBench answer whose extensions this worker loaded already: they are loaded still,
  // with their static state; a fresh worker judges it as it would the first time.
  std::string answer_key;
  if (candidate.format == "kernelbench") {
    try {
      answer_key = sha256_file_hex(candidate.path);
    } catch (const std::exception&) {
    }
    if (!answer_key.empty() && answers_in_worker_.contains(answer_key)) stop();
  }
  const int ran_before = proc_ && proc_->running() ? candidates_in_worker_ : 0;
  EvalResult result = evaluate_once(problem_path, candidate, options, false, trusted_eager_ms);
  // Why a fresh worker should try again, if it should: a previous candidate in this worker, or
  // another process on the GPU (its memory, or its kernels' fault), could have caused the failure.
  const auto shared = [&] { return last_shared_ || (admission_ && admission_->others_hold()); };  // reads the ledger
  const char* why = fault_beside_others(result, last_shared_)               ? kRetryGpuFaultShared
                    : suspect(result) && out_of_memory(result) && shared() ? "shared_gpu_memory"
                    : suspect(result) && ran_before > 0                    ? "after_candidate"
                                                                           : nullptr;
  if (why) {
    const bool after_candidate = std::string_view(why) == "after_candidate";
    const bool fault = std::string_view(why) == kRetryGpuFaultShared;
    WorkerRetry retry{to_string(result.status), result.reason, result.message, why,
                      !fault && ran_before > 0 ? last_label_ : ""};
    stop();  // a fresh worker; with the GPU to itself unless a candidate before is suspected
    EvalResult again = evaluate_once(problem_path, candidate, options, !after_candidate, trusted_eager_ms);
    if (after_candidate && !suspect(again) && !last_label_.empty()) {
      charges_.push_back({last_label_, last_problem_, name, problem_path, retry.first_status, retry.first_reason,
                          retry.first_message});
      notice(fmt::format("{} is charged: the next evaluation in its worker ({}) failed with {} {}, and passed "
                         "on a fresh worker",
                         last_label_, name, retry.first_status, retry.first_reason));
    }
    // A fault that recurs alone is the candidate's; one that does not was a neighbour's.
    if (fault && !cuda_fault(again))
      notice(fmt::format("{}: a CUDA fault while other processes used the GPU did not recur with the GPU to "
                         "itself; its verdict is the second try's ({})",
                         name, to_string(again.status)));
    again.isolation.memory_wait_seconds += result.isolation.memory_wait_seconds;
    again.isolation.retry = std::move(retry);
    result = std::move(again);
  }
  // Only an answer that loaded extensions keeps state in the process (its module is executed
  // afresh every time).
  if (!answer_key.empty() && !result.extensions.empty()) answers_in_worker_.insert(answer_key);
  last_label_ = name;
  last_problem_ = problem_path;
  return result;
}

EvalResult WorkerClient::evaluate_once(const std::string& problem_path, const CandidateRef& candidate,
                                       const EvalOptions& options, bool exclusive,
                                       std::optional<double> trusted_eager_ms) {
  EvalResult result;
  result.format = candidate.format;
  if (auto err = ensure_started()) {
    result.status = Status::InternalError;
    if (err->kind == reason::kSandboxUnmet) result.reason = err->kind;
    result.message = err->message;
    return result;
  }
  std::optional<GpuAdmission::Ticket> ticket = admit("evaluate", problem_path, exclusive);
  const double waited = ticket ? ticket->waited_seconds() : 0.0;
  const bool shared_at_start = ticket && ticket->shared();
  std::ofstream(opts_.log_path, std::ios::app) << "\n=== kagent: evaluate " << problem_path << "\n";
  auto log_start = fs::file_size(opts_.log_path);
  // A kernelbench candidate compiles inside the evaluation (load_inline): give it that time too.
  auto timeout = opts_.request_timeout +
                 (candidate.format == "kernelbench" ? opts_.kernelbench_build_allowance : std::chrono::milliseconds(0));
  ContentionRecorder contention(gpu_watch_.get(), timing_lock_);
  contention.start(own_processes());
  Reply r = request(protocol::EvaluateRequest{absolute_path(problem_path), with_absolute_paths(candidate),
                                              with_absolute_paths(options), trusted_eager_ms},
                    timeout, &contention, &opts_.phase_budgets);
  const double lock_waited = lock_waited_;
  const GpuContention seen = contention.finish(own_processes());
  last_shared_ = seen.shared || shared_at_start || (admission_ && admission_->others_hold(ticket ? &*ticket : nullptr));
  ticket.reset();
  result.isolation.memory_wait_seconds = waited;
  result.isolation.timing_lock_wait_seconds = lock_waited;
  auto candidate_log = [&] {
    std::string tail = log_tail(4000);
    auto size = fs::file_size(opts_.log_path);
    size_t fresh = size > log_start ? size - log_start : 0;  // only what this evaluation printed
    return fresh < tail.size() ? tail.substr(tail.size() - fresh) : tail;
  };
  // What held the candidate's code in this worker, and what it tried (sandbox_section.h);
  // without the worker's answer the refusals are unknown, the mechanisms are not.
  std::optional<sandbox::Violations> refused;
  if (r.kind == Reply::Kind::Ok && r.body.contains("violations") && r.body["violations"].is_object())
    refused = r.body["violations"].get<sandbox::Violations>();
  const nlohmann::json section = sandbox::result_section(sandbox_, refused);
  result.sandbox = section;
  switch (r.kind) {
    case Reply::Kind::Ok:
      result = r.body["result"].get<EvalResult>();
      result.sandbox = section;
      result.isolation.memory_wait_seconds = waited;
      result.isolation.timing_lock_wait_seconds = lock_waited;
      ++candidates_in_worker_;
      if (result.timing && gpu_watch_) result.timing->contention = seen;
      if (!r.forged.empty()) {
        // Off with the guards (the guard suite shows each hack passes without its guard): the
        // forged lines are still no verdict, only the rejection is left out.
        if (options.guards.on(worker::guard::kReplyForged)) reject_forged(result, r.forged);
        stop();  // code that writes on the pipe may write again, into the next request's reply
        return result;
      }
      if (result.status == Status::Correct && result.timing) store_baselines(problem_path, device_, options, *result.timing);
      // The worker exits after this reply: its context is lost, or the candidate left what it
      // could not put back. Waited for, so the next request never meets a dying worker.
      if (r.body.value("fatal", false) || r.body.value("replace", false)) {
        if (r.body.value("fatal", false)) result.worker_log_tail = candidate_log();
        proc_->wait(std::chrono::milliseconds(10000));
        stop();
      }
      return result;
    case Reply::Kind::Error:
      result.status = Status::InternalError;
      result.message = r.body["error"].value("message", "worker error");
      if (!r.forged.empty() && options.guards.on(worker::guard::kReplyForged)) reject_forged(result, r.forged);
      // The candidate ran, and the worker answered without its state check: nothing says the
      // worker is clean, so it is not used again (kept, the next candidate would fail on what
      // this one left, as the first candidate of its worker, and so never be retried).
      stop();
      return result;
    case Reply::Kind::Timeout:
      if (r.overrun) {  // the candidate's own time in one phase, which its worker's siblings may wait for
        result.status = Status::Timeout;
        result.reason = reason::kPhaseBudget;
        result.message = describe(*r.overrun);
        // What the worker's reply would have recorded of the phase it was killed in.
        result.phases.push_back(PhaseRecord{r.overrun->phase, r.overrun->wall_s, 0, kFailureCandidate});
      } else if (!r.detail.empty()) {  // the lock was not had: another worker's doing, not this candidate's
        result.status = Status::InternalError;
        result.message = r.detail + ": killed";
      } else {
        result.status = Status::Timeout;
        result.message = fmt::format("no verdict within {:.0f} s: the candidate hangs (killed)",
                                     std::chrono::duration<double>(timeout).count());
      }
      stop();
      result.device = device_;
      result.worker_log_tail = candidate_log();
      return result;
    case Reply::Kind::MemoryLimit:
      result.status = Status::Crash;
      result.reason = sandbox::kReasonHostMemory;
      result.message = r.detail + ": killed";
      stop();
      result.device = device_;
      result.worker_log_tail = candidate_log();
      return result;
    case Reply::Kind::Died:
      result.status = Status::Crash;
      // SIGXCPU: the sandbox's CPU-time limit (RLIMIT_CPU) ended a candidate that computed on the host.
      if (r.exit && r.exit->signaled && r.exit->signal == SIGXCPU) result.reason = sandbox::kReasonCpuTime;
      result.message = "the worker died during the evaluation: " + r.detail;
      result.worker_log_tail = candidate_log();
      result.device = device_;
      stop();
      return result;
  }
  return result;
}

}  // namespace kagent
