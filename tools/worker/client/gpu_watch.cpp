#include "worker/client/gpu_watch.h"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "worker/client/file_users.h"

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
  Result (*count)(unsigned int*) = nullptr;
  Result (*by_index)(unsigned int, Device*) = nullptr;
  Result (*uuid)(Device, char*, unsigned int) = nullptr;

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

std::vector<std::string> GpuWatch::machine_uuids() {
  Nvml n;
  n.lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib || !n.bind(n.init, "nvmlInit_v2") || !n.bind(n.count, "nvmlDeviceGetCount_v2") ||
      !n.bind(n.by_index, "nvmlDeviceGetHandleByIndex_v2") || !n.bind(n.uuid, "nvmlDeviceGetUUID"))
    return {};
  if (n.init() != Nvml::kSuccess) return {};
  n.bind(n.shutdown, "nvmlShutdown");
  unsigned int count = 0;
  if (n.count(&count) != Nvml::kSuccess) return {};
  std::vector<std::string> uuids;
  for (unsigned int i = 0; i < count; ++i) {
    Nvml::Device d = nullptr;
    char buf[96] = {};  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
    if (n.by_index(i, &d) == Nvml::kSuccess && n.uuid(d, buf, sizeof buf) == Nvml::kSuccess) uuids.emplace_back(buf);
  }
  return uuids;
}

std::string describe_process(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(in, name);
  return fmt::format("pid {} ({})", pid, name.empty() ? "?" : name);
}

std::optional<std::vector<pid_t>> GpuWatch::other_pids(const std::set<pid_t>& own) const {
  try {
    std::set<pid_t> pids;
    for (auto query : {nvml_->compute, nvml_->graphics})
      for (const auto& p : nvml_->processes(query))
        if (!own.contains(static_cast<pid_t>(p.pid))) pids.insert(static_cast<pid_t>(p.pid));
    return std::vector<pid_t>(pids.begin(), pids.end());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::vector<std::string>> GpuWatch::others(const std::set<pid_t>& own) const {
  const auto pids = other_pids(own);
  if (!pids) return std::nullopt;
  std::vector<std::string> out;
  for (pid_t pid : *pids) out.push_back(describe_process(pid));
  return out;
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
  const bool locked = !timing_lock_.empty();
  if (locked && !exclusive_) return;  // nothing is timed outside the exclusive hold
  const auto seen = watch_->other_pids(own);
  if (!seen) return;
  c_.known = true;
  const std::set<pid_t> siblings = locked ? processes_with_file_open(*seen, timing_lock_) : std::set<pid_t>{};
  const auto add = [](std::vector<std::string>& to, std::string what) {
    if (std::find(to.begin(), to.end(), what) == to.end()) to.push_back(std::move(what));
  };
  for (pid_t pid : *seen) add(siblings.contains(pid) ? c_.siblings : c_.others, describe_process(pid));
  c_.shared = !c_.others.empty();
}

void ContentionRecorder::exclusive(bool held, const std::set<pid_t>& own) {
  if (held) {
    exclusive_ = true;
    c_.timing_lock = !timing_lock_.empty();
    look(own);
  } else if (exclusive_) {
    look(own);  // a last look (what starts after the release is a sibling, left out as before)
    exclusive_ = false;
  }
}

GpuContention ContentionRecorder::finish(const std::set<pid_t>& own) {
  if (!watch_) return c_;
  look(own);
  c_.sm_clock_mhz_after = watch_->sm_clock_mhz();
  return c_;
}

}  // namespace kagent
