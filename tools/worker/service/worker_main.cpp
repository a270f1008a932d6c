// kagent-worker: owns one GPU, embeds Python, answers JSON requests on fds 3 (in) and 4 (out).
// Its stdout/stderr (and the candidate's printf) go wherever kagent points them: a log file.
#include <fcntl.h>
#include <unistd.h>

#include <ATen/Parallel.h>
#include <cuda_runtime_api.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/json_lines.h"
#include "common/paths.h"
#include "common/stop_signals.h"
#include "sandbox/apply_sandbox.h"
#include "sandbox/cuda_probe.h"
#include "sandbox/violation_verdict.h"
#include "worker/protocol/protocol.h"
#include "worker/python/python_runtime.h"
#include "worker/service/worker_service.h"

namespace {

constexpr const char* kDrawAheadArg = "--draw-ahead";  // FOLDER BUDGET_BYTES (evaluation/draw_ahead.h)

void write_start_error(int fd, const std::string& message) {
  try {
    kagent::write_json_line(fd, kagent::protocol::error_line("worker_start", message));
  } catch (...) {
  }
}

// Thread pools and the CUDA context come up lazily; started now, before RLIMIT_NPROC is
// set relative to the threads running, they do not eat into the candidates' allowance.
void start_runtime_threads(const kagent::DeviceInfo& device) {
  at::parallel_for(0, int64_t{1} << 16, 1, [](int64_t, int64_t) {});
  if (device.available) {
    cudaError_t e = cudaFree(nullptr);  // creates the primary context torch uses
    if (e != cudaSuccess) {
      std::fprintf(stderr, "kagent-worker: CUDA context: %s\n", cudaGetErrorString(e));
      cudaGetLastError();
    }
  }
}

// Probe mode (sandbox/cuda_probe.h): the sandbox the environment describes, then a device count.
int probe_cuda(const std::string& python) {
  try {
    auto sandbox = kagent::sandbox::Sandbox::enter(kagent::sandbox::SandboxPolicy::from_environment(), {{python}});
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) return 0;
    std::fprintf(stderr, "kagent-worker: CUDA probe under the sandbox (disabled: %s): %s\n",
                 std::getenv("KAGENT_SANDBOX_DISABLE") ? std::getenv("KAGENT_SANDBOX_DISABLE") : "",
                 e == cudaSuccess ? "no device" : cudaGetErrorString(e));
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kagent-worker: CUDA probe: %s\n", e.what());
    return 2;
  }
}

// Draw-ahead mode (kagent_worker/draw_ahead.py, evaluation/draw_ahead.h): the trials' CPU
// draws of the problems the pool names, into `folder`. It runs problem files, so under the
// workers' sandbox, whose scratch folder `folder` is (the pool makes it and sets the policy so):
// the only place it writes, and one that the workers' sandboxes read and cannot write.
int draw_ahead(const std::string& python, const std::string& folder, const std::string& budget) {
  constexpr int kRequestFd = 3, kReplyFd = 4;
  std::unique_ptr<kagent::sandbox::Sandbox> sandbox;
  try {
    sandbox = kagent::sandbox::Sandbox::enter(kagent::sandbox::SandboxPolicy::from_environment(), {{python}});
    sandbox->watch_orchestrator();
    kagent::worker::PythonRuntime py(python);
    sandbox->limit_resources();
    namespace kw = kagent::worker;
    kw::PyRef dir = kw::check(PyUnicode_FromString(folder.c_str()));
    kw::PyRef bytes = kw::check(PyLong_FromString(budget.c_str(), nullptr, 10));
    kw::PyRef in = kw::check(PyLong_FromLong(kRequestFd)), out = kw::check(PyLong_FromLong(kReplyFd));
    py.call(kw::PyFn::DrawAheadServe, {dir, bytes, in, out});
    sandbox->leave_if_orchestrator_gone();
    return 0;
  } catch (const kagent::worker::PythonError& e) {
    std::fprintf(stderr, "kagent-worker --draw-ahead: %s\n%s\n", e.message.c_str(), e.traceback.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kagent-worker --draw-ahead: %s\n", e.what());
  }
  if (sandbox) sandbox->leave_if_orchestrator_gone();
  return 1;
}

// The candidates' working directory: the scratch folder, the one place the sandbox lets them
// write. An answer that builds its extension in a folder relative to it
// (`build_directory="cuda_extensions"`, `os.makedirs(...)`) works there as it does in
// KernelBench's harness; in the caller's folder the sandbox refused it. Entered once Python has
// started (site made sys.path absolute against the caller's folder) and before any request: the
// client sends every path absolute (worker/client/request_paths.h). Without the sandbox there is
// no scratch folder and the worker stays where it was started.
void enter_scratch(const nlohmann::json& sandbox_report) {
  const std::string scratch = sandbox_report.value("scratch", "");
  if (scratch.empty()) return;
  if (::chdir(scratch.c_str()) != 0)
    throw std::runtime_error("cannot enter the scratch folder " + scratch + ": " + std::strerror(errno));
}

// Seconds since the last call: the start-up's steps, one after the other.
class StepClock {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

int main(int argc, char** argv) {
  constexpr int kRequestFd = 3, kReplyFd = 4;
  const std::string python = kagent::worker_python();
  if (argc == 2 && std::string(argv[1]) == kagent::sandbox::kCudaProbeArg) return probe_cuda(python);
  const bool draw_mode = argc == 4 && std::string(argv[1]) == kDrawAheadArg;
  if (::fcntl(kRequestFd, F_GETFD) < 0 || ::fcntl(kReplyFd, F_GETFD) < 0) {
    std::fprintf(stderr, "kagent-worker: speaks JSON on fds 3 and 4 and is started by kagent, not by hand\n");
    return 2;
  }
  if (draw_mode) {
    kagent::ignore_stop_signals();
    ::signal(SIGPIPE, SIG_IGN);
    return draw_ahead(python, argv[2], argv[3]);
  }
  // A stop from outside is kagent's to act on (common/stop_signals.h): a worker it killed
  // mid-evaluation would hand the candidate the signal's crash as its verdict. Their monitors end
  // workers when kagent ends. Set before the monitor forks, so both ignore them.
  kagent::ignore_stop_signals();
  // A reply written once kagent is gone fails (EPIPE) instead of killing the worker: SIGPIPE's
  // default ended it before its watcher could empty the scratch folder (CI, twice). Children
  // spawned by kagent's Subprocess and Python's subprocess get the default back.
  ::signal(SIGPIPE, SIG_IGN);
  // Inductor's compile pool would spawn processes from inside the worker; keep it in-process.
  ::setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 0);

  // The sandbox closes in two steps around the runtime's start:
  //  1. now, while this process has one thread: namespaces, Landlock and the uid switch only
  //     take a whole process while it is single-threaded (a later thread pool would stay
  //     outside), and the environment that sends caches into the scratch folder must be set
  //     before the interpreter copies it. Python, torch and CUDA then start inside the
  //     sandbox, which is what they run in for every candidate anyway.
  //  2. after they started: the resource limits, measured against the address space and the
  //     threads the runtime needs (RLIMIT_NPROC counts threads).
  // Both come before the first request, so no candidate code ever runs outside.
  // Before that, which filesystem layers CUDA works under here (a child process asks).
  std::unique_ptr<kagent::sandbox::Sandbox> sandbox;
  kagent::sandbox::CudaLayerChoice cuda_layers;
  StepClock clock;
  nlohmann::json startup = nlohmann::json::object();
  try {
    kagent::sandbox::SandboxPolicy policy = kagent::sandbox::SandboxPolicy::from_environment();
    cuda_layers = kagent::sandbox::choose_cuda_layers(policy, "/proc/self/exe");
    for (const auto& layer : cuda_layers.left_out) policy.disabled.insert(layer);
    startup["cuda_probe"] = clock.lap();
    sandbox = kagent::sandbox::Sandbox::enter(policy, {{python}});
    // From here on a start-up of seconds (Python, torch, CUDA) reads no request either.
    sandbox->watch_orchestrator();
    startup["sandbox"] = clock.lap();
  } catch (const std::exception& e) {
    write_start_error(kReplyFd, std::string("sandbox: ") + e.what());
    return 1;
  }

  try {
    // Lock lines (protocol.h) go out before the reply, with its id (0 before the hello).
    int request_id = 0;
    std::string request_nonce;  // echoed like the reply's (worker_client.cpp checks both)
    const kagent::worker::Progress progress = [&request_id, &request_nonce](const nlohmann::json& line) {
      nlohmann::json out = line;
      out["id"] = request_id;
      if (!request_nonce.empty()) out["nonce"] = request_nonce;
      kagent::write_json_line(kReplyFd, out);
    };
    // A replacement worker is its GPU's sibling before CUDA starts (worker_timing_lock.h).
    std::optional<kagent::GpuTimingLock> joined = kagent::worker::join_timing_lock_early(progress);
    // CUDA's context comes up on its own thread while Python imports torch and what a spec
    // needs (the two take seconds each; the GIL is not involved in the first). A failure there
    // is seen again, and reported, by start_runtime_threads. A joined lock is held shared for
    // the context's start alone (not the imports: a sibling's timing would wait for them) and is
    // the thread's until it ends.
    std::jthread cuda_context([lock = joined ? &*joined : nullptr] {
      const kagent::GpuTimingLock::Hold starting(lock, kagent::LockMode::Shared);
      if (cudaFree(nullptr) != cudaSuccess) cudaGetLastError();
    });
    kagent::worker::PythonRuntime py(python);
    startup["python"] = clock.lap();
    try {
      py.call(kagent::worker::PyFn::Preload, {});
    } catch (const kagent::worker::PythonError& e) {  // only time is lost: the first spec imports them
      std::fprintf(stderr, "kagent-worker: preload: %s\n", e.message.c_str());
    }
    startup["preload"] = clock.lap();
    cuda_context.join();
    startup["cuda_context"] = clock.lap();  // what the imports did not cover
    kagent::worker::WorkerService service(py, progress, std::move(joined));
    startup["device"] = clock.lap();  // torch's CUDA start, the DRAM bandwidth (its lock wait included)
    start_runtime_threads(service.device());
    startup["runtime_threads"] = clock.lap();
    service.set_startup(std::move(startup));
    sandbox->limit_resources();
    nlohmann::json report = sandbox->report();
    if (!cuda_layers.left_out.empty() || !cuda_layers.device_found) report["cuda_fallback"] = cuda_layers.report();
    if (cuda_layers.probed) report["cuda_probe_seconds"] = cuda_layers.seconds;
    enter_scratch(report);
    service.set_sandbox_report(std::move(report));
    nlohmann::json hello = kagent::protocol::ok_line(service.on(kagent::protocol::HelloRequest{}));
    hello["id"] = 0;
    // What the runtime itself tried during start-up is not a candidate's doing: logged, so
    // that a false alarm shows.
    if (auto v = sandbox->end_request(); v.any())
      std::fprintf(stderr, "kagent-worker: sandbox refusals during start-up: %s\n", nlohmann::json(v).dump().c_str());
    kagent::write_json_line(kReplyFd, hello);
    kagent::JsonLineReader reader(kRequestFd);
    bool tainted = false;  // an earlier candidate's leftovers acted between requests
    for (;;) {
      auto msg = reader.read(std::nullopt);
      if (msg.state != kagent::JsonLineReader::State::Message) {  // kagent closed the pipe
        sandbox->leave_if_orchestrator_gone();  // by its death: the watcher's way, now
        return 0;
      }
      // Refusals between two requests come from code a candidate left behind (a thread, a
      // child that outlived its request): logged, and the worker is replaced after this
      // evaluation so that nothing of it meets the next candidate. They never count against
      // the candidate of this request.
      const auto between = sandbox->begin_request();
      if (between.any())
        std::fprintf(stderr, "kagent-worker: sandbox refusals between requests (left by an earlier candidate): %s\n",
                     nlohmann::json(between).dump().c_str());
      request_id = msg.message.value("id", 0);
      request_nonce = msg.message.value("nonce", "");
      nlohmann::json reply = service.handle(msg.message);
      const auto violations = sandbox->end_request();
      const bool evaluate = msg.message.value("op", "") == kagent::enum_name(kagent::protocol::kOpNames,
                                                                              kagent::protocol::Op::Evaluate, "");
      // An evaluation runs the candidate's code (its import, __init__, calls, threads and
      // children): whatever was refused during it is the candidate's. The other requests run
      // the problem's own code alone: reported in the log only.
      if (evaluate) {
        kagent::sandbox::apply_violations(reply, violations);
        reply["violations"] = violations;  // the result's sandbox section (sandbox_section.h)
      } else if (violations.any()) {
        std::fprintf(stderr, "kagent-worker: sandbox refusals: %s\n", nlohmann::json(violations).dump().c_str());
      }
      tainted = tainted || between.any();
      const bool leave = evaluate && tainted;  // the client replaces a worker only after an evaluation
      if (leave) reply["replace"] = true;
      reply["id"] = msg.message.value("id", 0);
      reply["nonce"] = msg.message.value("nonce", "");  // what the client checks the reply by
      kagent::write_json_line(kReplyFd, reply);
      std::fflush(stdout);
      std::fflush(stderr);
      // The CUDA context is gone (a fresh worker takes over), kagent asked it to stop, or an
      // earlier candidate's leftovers acted between requests.
      if (service.must_exit() || leave) std::_Exit(reply.value("fatal", false) ? 3 : 0);
    }
  } catch (const kagent::worker::PythonError& e) {
    sandbox->leave_if_orchestrator_gone();
    write_start_error(kReplyFd, e.message);
    return 1;
  } catch (const std::exception& e) {
    sandbox->leave_if_orchestrator_gone();  // a reply kagent could no longer read (EPIPE)
    write_start_error(kReplyFd, e.what());
    return 1;
  }
}
