#include "worker/service/worker_state.h"

#include <unistd.h>

#include <c10/core/AllocatorConfig.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuda/cuda_error.h"
#include "worker/service/gpu_memory.h"

namespace kagent::worker {

namespace {

// Errors that say a stream capture is under way somewhere (an unsafe call was refused).
bool capture_related(cudaError_t e) {
  switch (e) {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorStreamCaptureWrongThread:
    case cudaErrorCapturedEvent:
      return true;
    default:
      return false;
  }
}

std::string error_text(cudaError_t e) { return fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e)); }

// The caching allocator's settings as one comparable text.
std::string allocator_settings() {
  using Config = c10::CachingAllocator::AcceleratorAllocatorConfig;
  std::string divisions;
  for (size_t d : Config::roundup_power2_divisions()) divisions += std::to_string(d) + ",";
  return fmt::format("max_split_size={} max_non_split_rounding_size={} garbage_collection_threshold={} "
                     "expandable_segments={} roundup_power2_divisions=[{}] last_settings='{}'",
                     Config::max_split_size(), Config::max_non_split_rounding_size(),
                     Config::garbage_collection_threshold(), Config::use_expandable_segments(), divisions,
                     Config::last_allocator_settings());
}

std::string thread_name(pid_t tid) {
  std::ifstream in(fmt::format("/proc/self/task/{}/comm", tid));
  std::string name;
  std::getline(in, name);
  return name.empty() ? "?" : name;
}

// hygiene.restore: what differs from `snapshot`, put back where it can be. `during_evaluation`:
// the evaluation's own no_grad stays (hygiene.py).
std::vector<LeftBehind> restore_python(PythonRuntime& py, const PyRef& snapshot, bool during_evaluation) {
  std::vector<PyRef> args{snapshot};
  if (during_evaluation) args.push_back(PyRef::borrow(Py_True));
  std::vector<LeftBehind> found;
  for (const auto& f : to_json(py.call(PyFn::RestoreWorkerState, args).get())) found.push_back(f.get<LeftBehind>());
  return found;
}

}  // namespace

std::set<pid_t> own_threads() {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    try {
      out.insert(static_cast<pid_t>(std::stol(entry.path().filename().string())));
    } catch (const std::exception&) {
    }
  }
  return out;
}

char thread_state(pid_t tid) {
  std::ifstream in(fmt::format("/proc/self/task/{}/stat", tid));
  std::string line;
  if (!std::getline(in, line)) return '?';
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

int64_t thread_cpu_ticks(pid_t tid) {
  std::ifstream in(fmt::format("/proc/self/task/{}/stat", tid));
  std::string line;
  if (!std::getline(in, line)) return -1;
  const auto close = line.rfind(')');  // the name may hold spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  // After the name: state is field 3; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return utime + stime;
}

WorkerState::WorkerState(PythonRuntime& py, const DeviceInfo& device) : py_(py), device_(device) {
  try {
    snapshot_ = py_.call(PyFn::CaptureWorkerState, {});
  } catch (const PythonError& e) {  // checked after the evaluation: a worker not known clean is replaced
    capture_error_ = e.message.substr(0, 300);
  }
  threads_ = own_threads();
  if (device_.available) {
    allocated_bytes_ = gpu_allocated_bytes();
    allocator_settings_ = allocator_settings();
  }
}

void WorkerState::add(std::vector<LeftBehind>& out, LeftBehind item) {
  if (item.action == kLeftReplaced) replace_ = true;
  out.push_back(std::move(item));
}

bool WorkerState::check_cuda(std::vector<LeftBehind>& out) {
  bool capturing = false;
  // Work still queued on any stream finishes here; an error it raised shows now.
  cudaError_t e = cudaDeviceSynchronize();
  for (int pass = 0; pass < 2; ++pass) {
    if (e != cudaSuccess) {
      if (cuda::is_sticky(e)) {
        add(out, {"cuda_error", "the CUDA context is lost: " + error_text(e), kLeftReplaced, true});
        return false;
      }
      (void)cudaGetLastError();
      if (capture_related(e)) capturing = true;
      else add(out, {"cuda_error", "an error left pending (cleared): " + error_text(e), kLeftRestored, false});
    }
    e = cudaGetLastError();  // a launch error nobody checked would fail kagent's next check
  }
  // A capture begun and never ended: on a stream kagent knows, or anywhere in global mode
  // (then an unsafe call such as cudaMalloc is refused in every thread).
  for (cudaStream_t s : {c10::cuda::getCurrentCUDAStream().stream(), cudaStreamLegacy, cudaStreamPerThread}) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaError_t q = cudaStreamIsCapturing(s, &status);
    if (q != cudaSuccess) (void)cudaGetLastError();
    if (status != cudaStreamCaptureStatusNone || capture_related(q)) capturing = true;
  }
  void* probe = nullptr;
  const cudaError_t m = cudaMalloc(&probe, 256);
  if (m == cudaSuccess) {
    (void)cudaFree(probe);
  } else {
    (void)cudaGetLastError();
    if (capture_related(m)) capturing = true;
  }
  if (capturing)
    add(out, {"graph_capture", "a CUDA graph capture was still in progress (begun, never ended)", kLeftReplaced, true});
  return capturing;
}

void WorkerState::check_python(std::vector<LeftBehind>& out) {
  // What was put back during the evaluation is what the candidate left too (named once).
  for (const auto& early : put_back_early_) {
    bool again = false;
    for (const auto& o : out) again = again || o.item == early.item;
    if (!again) add(out, early);
  }
  if (!snapshot_) {
    add(out, {"python_state", "the state could not be captured: " + capture_error_, kLeftReplaced, false});
    return;
  }
  for (auto& item : restore_python(py_, snapshot_, /*during_evaluation=*/false)) {
    bool again = false;
    for (const auto& o : out) again = again || (o.item == item.item && o.detail == item.detail);
    if (!again) add(out, std::move(item));
  }
}

std::vector<LeftBehind> WorkerState::put_back_python_now() {
  if (!snapshot_) return {};
  std::vector<LeftBehind> out = restore_python(py_, snapshot_, /*during_evaluation=*/true);
  put_back_early_.insert(put_back_early_.end(), out.begin(), out.end());
  return out;
}

void WorkerState::check_threads(std::vector<LeftBehind>& out) {
  std::vector<pid_t> fresh;
  for (pid_t t : own_threads())
    if (!threads_.contains(t)) fresh.push_back(t);
  if (fresh.empty()) return;
  // Library pools started during the evaluation sleep; a thread the candidate left running
  // keeps computing (and would disturb every later timing). Looked at five times over 50 ms:
  // runnable in most looks, or 20 ms of CPU, is computing (a loaded machine may run it little).
  std::vector<int64_t> before;
  std::vector<int> runnable(fresh.size(), 0);
  for (pid_t t : fresh) before.push_back(thread_cpu_ticks(t));
  for (int look = 0; look < 5; ++look) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (size_t i = 0; i < fresh.size(); ++i) runnable[i] += thread_state(fresh[i]) == 'R';
  }
  const long hz = ::sysconf(_SC_CLK_TCK);
  std::vector<std::string> busy;
  for (size_t i = 0; i < fresh.size(); ++i) {
    const int64_t after = thread_cpu_ticks(fresh[i]);
    const bool used_cpu = before[i] >= 0 && after >= 0 && (after - before[i]) * 1000 >= 20 * hz;
    if (after >= 0 && (runnable[i] >= 3 || used_cpu)) busy.push_back(fmt::format("{} ({})", fresh[i], thread_name(fresh[i])));
  }
  if (!busy.empty())
    add(out, {"thread",
              fmt::format("{} thread(s) started during the evaluation still compute: {}", busy.size(),
                          fmt::join(busy, ", ")),
              kLeftReplaced, true});
}

void WorkerState::check_memory(std::vector<LeftBehind>& out) {
  // Nothing of kagent's stays allocated between evaluations (models and inputs are built per
  // evaluation); the margin is for library workspaces (cuBLAS keeps one per stream). Fixed, not
  // a share of the GPU: a 1 GiB graph pool kept alive on a 139 GB H200 is still a leak.
  const int64_t threshold = int64_t{512} << 20;
  int64_t held = gpu_allocated_bytes() - allocated_bytes_;
  if (held > threshold) {
    PyGC_Collect();  // cycles (a module and its CUDA graph) go only this way
    held = gpu_allocated_bytes() - allocated_bytes_;
  }
  if (held > threshold)
    add(out, {"gpu_memory",
              fmt::format("{} MiB still allocated after the evaluation (tensors or CUDA graphs kept alive)", held >> 20),
              kLeftReplaced, false});
  release_cached_gpu_memory();  // other processes on this GPU may need it
}

void WorkerState::check_allocator(std::vector<LeftBehind>& out) {
  const std::string now = allocator_settings();
  if (now != allocator_settings_)
    add(out, {"allocator_settings", fmt::format("{} -> {}", allocator_settings_, now), kLeftReplaced, false});
}

std::vector<LeftBehind> WorkerState::check_and_restore(bool context_lost) {
  std::vector<LeftBehind> out;
  if (context_lost) {
    replace_ = true;  // the evaluation's own verdict says what happened
    return out;
  }
  try {
    // A capture still open refuses the allocator's calls (check_memory's release of cached
    // memory among them): the worker is replaced anyway, so those checks are left out.
    const bool capturing = device_.available && check_cuda(out);
    if (replace_ && !out.empty() && out.back().item == "cuda_error") return out;  // nothing else is safe to call
    try {
      check_python(out);
    } catch (const PythonError& e) {  // the check itself broke: the state is not known to be clean
      add(out, {"python_state", "the state check failed: " + e.message.substr(0, 300), kLeftReplaced, false});
    }
    check_threads(out);
    if (device_.available && !capturing) {
      check_allocator(out);
      check_memory(out);
    }
  } catch (const std::exception& e) {
    // A check that throws (a c10 error from a CUDA call) leaves the state unknown: never a
    // worker that goes on as if clean.
    add(out, {"state_check", std::string("the state check failed: ") + e.what(), kLeftReplaced, false});
  }
  return out;
}

}  // namespace kagent::worker
