#include "worker/client/gpu_watch.h"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

namespace kagent {

// NVML's C ABI, as documented (nvml.h is not part of every CUDA toolkit install): the few
// entry points used here, resolved with dlsym.
struct GpuWatch::Nvml {
  using Result = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
  using Device = void*;
  struct ProcessInfo {  // nvmlProcessInfo_v2_t, also what the _v3 process queries fill
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
  };
  static constexpr Result kSuccess = 0;
  static constexpr Result kInsufficientSize = 7;
  static constexpr int kClockSm = 1;

  void* lib = nullptr;
  Device device = nullptr;
  Result (*init)() = nullptr;
  Result (*shutdown)() = nullptr;
  Result (*by_uuid)(const char*, Device*) = nullptr;
  Result (*compute)(Device, unsigned int*, ProcessInfo*) = nullptr;
  Result (*graphics)(Device, unsigned int*, ProcessInfo*) = nullptr;
  Result (*clock)(Device, int, unsigned int*) = nullptr;

  ~Nvml() {
    if (shutdown) shutdown();
    if (lib) ::dlclose(lib);
  }
  template <class F>
  bool bind(F& fn, const char* name) {
    fn = reinterpret_cast<F>(::dlsym(lib, name));
    return fn != nullptr;
  }
  std::vector<ProcessInfo> processes(Result (*query)(Device, unsigned int*, ProcessInfo*)) const {
    std::vector<ProcessInfo> infos(16);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned int count = static_cast<unsigned int>(infos.size());
      const Result r = query(device, &count, infos.data());
      if (r == kSuccess) {
        infos.resize(count);
        return infos;
      }
      if (r != kInsufficientSize) throw std::runtime_error("NVML process query failed");
      infos.resize(static_cast<size_t>(count) * 2 + 16);
    }
    throw std::runtime_error("NVML process list keeps growing");
  }
};

GpuWatch::GpuWatch(std::unique_ptr<Nvml> nvml) : nvml_(std::move(nvml)) {}
GpuWatch::~GpuWatch() = default;

std::unique_ptr<GpuWatch> GpuWatch::open(const std::string& uuid) {
  if (uuid.empty()) return nullptr;
  auto n = std::make_unique<Nvml>();
  n->lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n->lib) return nullptr;
  if (!n->bind(n->init, "nvmlInit_v2") || !n->bind(n->by_uuid, "nvmlDeviceGetHandleByUUID") ||
      !n->bind(n->compute, "nvmlDeviceGetComputeRunningProcesses_v3") ||
      !n->bind(n->graphics, "nvmlDeviceGetGraphicsRunningProcesses_v3") || !n->bind(n->clock, "nvmlDeviceGetClockInfo"))
    return nullptr;
  if (n->init() != Nvml::kSuccess) return nullptr;
  n->bind(n->shutdown, "nvmlShutdown");  // from here on, the destructor shuts NVML down again
  if (n->by_uuid(uuid.c_str(), &n->device) != Nvml::kSuccess) return nullptr;
  return std::unique_ptr<GpuWatch>(new GpuWatch(std::move(n)));
}

namespace {

std::string process_name(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(in, name);
  return name.empty() ? "?" : name;
}

}  // namespace

std::optional<std::vector<std::string>> GpuWatch::others(const std::set<pid_t>& own) const {
  try {
    std::set<unsigned int> pids;
    for (auto query : {nvml_->compute, nvml_->graphics})
      for (const auto& p : nvml_->processes(query))
        if (!own.contains(static_cast<pid_t>(p.pid))) pids.insert(p.pid);
    std::vector<std::string> out;
    for (unsigned int pid : pids) out.push_back(fmt::format("pid {} ({})", pid, process_name(static_cast<pid_t>(pid))));
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::vector<std::pair<pid_t, uint64_t>>> GpuWatch::process_memory() const {
  try {
    std::vector<std::pair<pid_t, uint64_t>> out;
    for (auto query : {nvml_->compute, nvml_->graphics})
      for (const auto& p : nvml_->processes(query)) {
        // NVML's "not available" value (no permission to see another user's usage) counts 0.
        const uint64_t used = p.used_gpu_memory == ~0ULL ? 0 : p.used_gpu_memory;
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == static_cast<pid_t>(p.pid); });
        if (it == out.end()) out.emplace_back(static_cast<pid_t>(p.pid), used);
        else it->second = std::max(it->second, used);
      }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> GpuWatch::sm_clock_mhz() const {
  unsigned int mhz = 0;
  if (nvml_->clock(nvml_->device, Nvml::kClockSm, &mhz) != Nvml::kSuccess) return std::nullopt;
  return static_cast<int>(mhz);
}

void ContentionRecorder::start(const std::set<pid_t>& own) {
  c_ = GpuContention{};
  if (!watch_) return;
  c_.sm_clock_mhz_before = watch_->sm_clock_mhz();
  look(own);
}

void ContentionRecorder::look(const std::set<pid_t>& own) {
  if (!watch_) return;
  const auto seen = watch_->others(own);
  if (!seen) return;
  c_.known = true;
  for (const auto& o : *seen)
    if (std::find(c_.others.begin(), c_.others.end(), o) == c_.others.end()) c_.others.push_back(o);
  c_.shared = !c_.others.empty();
}

GpuContention ContentionRecorder::finish(const std::set<pid_t>& own) {
  if (!watch_) return c_;
  look(own);
  c_.sm_clock_mhz_after = watch_->sm_clock_mhz();
  return c_;
}

}  // namespace kagent
