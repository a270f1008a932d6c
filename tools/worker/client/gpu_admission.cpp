#include "worker/client/gpu_admission.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "common/fd.h"
#include "common/files.h"

namespace kagent {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWaiting = "waiting";
constexpr const char* kAdmitted = "admitted";

double gb(uint64_t bytes) { return static_cast<double>(bytes) / 1e9; }

// A process's start time (clock ticks since boot, /proc/<pid>/stat field 22): with the pid it
// names one process, even after its pid is reused.
std::optional<uint64_t> process_start(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; rest >> field; ++i)
    if (i == 22) return std::stoull(field);
  return std::nullopt;
}

bool alive(const nlohmann::json& e) {
  const auto start = process_start(e.value("pid", 0));
  return start && *start == e.value("start", uint64_t{0});
}

std::string new_id() {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}-{}", ::getpid(), counter++);
}

}  // namespace

uint64_t memory_need(int64_t footprint_bytes) {
  if (footprint_bytes <= 0) return uint64_t{2} << 30;
  return static_cast<uint64_t>(kNeedPerFootprint * static_cast<double>(footprint_bytes)) + kNeedOverhead;
}

std::string default_admission_folder() {
  if (const char* env = std::getenv("KAGENT_GPU_ADMISSION_DIR"); env && *env) return env;
  return "/tmp/kagent-gpu-admission";
}

GpuAdmission::GpuAdmission(std::string uuid, uint64_t total_bytes, const GpuWatch* watch, std::string folder)
    : uuid_(std::move(uuid)), watch_(watch), folder_(std::move(folder)) {
  // Headroom for what no ledger sees: fragmentation, the driver's own reservations.
  capacity_ = static_cast<uint64_t>(0.97 * static_cast<double>(total_bytes));
  capacity_ = capacity_ > (uint64_t{256} << 20) ? capacity_ - (uint64_t{256} << 20) : 0;
  const std::string name = uuid_.empty() ? "gpu" : uuid_;
  ledger_ = (fs::path(folder_) / (name + ".json")).string();
  lock_ = (fs::path(folder_) / (name + ".lock")).string();
  std::error_code ec;
  if (!fs::exists(folder_, ec)) {
    fs::create_directories(folder_, ec);
    ::chmod(folder_.c_str(), 01777);  // every user's kagent meets here, as in /tmp
  }
  usable_ = fs::is_directory(folder_, ec);
}

template <class Fn>
auto GpuAdmission::locked(Fn fn) const {
  Fd fd(::open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (!fd) throw std::system_error(errno, std::generic_category(), "cannot open " + lock_);
  ::fchmod(fd.get(), 0666);
  while (::flock(fd.get(), LOCK_EX) != 0)
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "cannot lock " + lock_);
  nlohmann::json entries = nlohmann::json::array();
  {
    std::ifstream in(ledger_);
    std::stringstream ss;
    ss << in.rdbuf();
    auto parsed = nlohmann::json::parse(ss.str(), nullptr, false);
    if (parsed.is_object() && parsed["entries"].is_array()) entries = parsed["entries"];
  }
  const size_t before = entries.size();
  nlohmann::json live = nlohmann::json::array();
  for (auto& e : entries)
    if (alive(e)) live.push_back(std::move(e));  // a dead process's ticket goes
  bool changed = live.size() != before;
  auto result = fn(live, changed);
  if (changed) {
    write_file_atomic(ledger_, nlohmann::json({{"gpu", uuid_}, {"entries", live}}).dump(1));
    ::chmod(ledger_.c_str(), 0666);
  }
  return result;  // the lock goes with fd
}

void GpuAdmission::remove(const std::string& id) const {
  try {
    locked([&](nlohmann::json& entries, bool& changed) {
      for (auto it = entries.begin(); it != entries.end(); ++it)
        if (it->value("id", "") == id) {
          entries.erase(it);
          changed = true;
          break;
        }
      return 0;
    });
  } catch (const std::exception&) {
    // the process's exit drops it anyway
  }
}

GpuAdmission::Decision GpuAdmission::decide(const nlohmann::json& entries, const std::string& id, uint64_t capacity,
                                            const std::vector<std::pair<pid_t, uint64_t>>& processes) {
  Decision d;
  const nlohmann::json* me = nullptr;
  for (const auto& e : entries)
    if (e.value("id", "") == id) me = &e;
  if (!me) return {true, 0, 0, ""};
  const uint64_t seq = me->value("seq", uint64_t{0});
  bool exclusive_other = false;
  std::set<pid_t> holder_workers;
  std::vector<std::string> holders;
  int earlier = 0;
  for (const auto& e : entries) {
    if (&e == me) continue;
    if (e.value("state", "") == kAdmitted) {
      ++d.holders;
      exclusive_other = exclusive_other || e.value("exclusive", false);
      holder_workers.insert(e.value("worker", 0));
      uint64_t bytes = e.value("bytes", uint64_t{0});
      for (const auto& [pid, used] : processes)
        if (pid == e.value("worker", 0)) bytes = std::max(bytes, used);
      d.taken += bytes;
      holders.push_back(fmt::format("pid {} {}", e.value("pid", 0), e.value("what", "")));
    } else if (e.value("seq", uint64_t{0}) < seq) {
      ++earlier;
    }
  }
  for (const auto& [pid, used] : processes)
    if (!holder_workers.contains(pid)) d.taken += used;
  const std::string more = holders.size() > 1 ? fmt::format(" and {} more", holders.size() - 1) : "";
  const std::string held_by = holders.empty() ? "" : fmt::format(" by {}{}", holders.front(), more);
  if (exclusive_other) {
    d.why = "another request holds the whole GPU" + held_by;
  } else if (earlier > 0) {
    d.why = fmt::format("{} request(s) queued before this one", earlier);
  } else if (me->value("exclusive", false)) {
    d.admit = d.holders == 0;
    if (!d.admit) d.why = fmt::format("it must run alone; {} other request(s) hold memory{}", d.holders, held_by);
  } else {
    const uint64_t need = me->value("bytes", uint64_t{0});
    d.admit = d.holders == 0 || d.taken + need <= capacity;
    if (!d.admit)
      d.why = fmt::format("it needs {:.1f} GB, {:.1f} of {:.1f} GB are taken{}", gb(need), gb(d.taken), gb(capacity),
                          held_by);
  }
  return d;
}

GpuAdmission::Ticket GpuAdmission::acquire(const AdmissionRequest& request, const Notice& notice) const {
  return std::move(*take(request, notice, true));
}

std::optional<GpuAdmission::Ticket> GpuAdmission::try_acquire(const AdmissionRequest& request) const {
  return take(request, {}, false);
}

std::optional<GpuAdmission::Ticket> GpuAdmission::take(const AdmissionRequest& request, const Notice& notice,
                                                       bool wait) const {
  Ticket t;
  if (!usable_) return t;
  const std::string id = new_id();
  const auto start = std::chrono::steady_clock::now();
  try {
    locked([&](nlohmann::json& entries, bool& changed) {
      uint64_t seq = 0;
      for (const auto& e : entries) seq = std::max(seq, e.value("seq", uint64_t{0}) + 1);
      entries.push_back({{"id", id},
                         {"pid", ::getpid()},
                         {"start", process_start(::getpid()).value_or(0)},
                         {"worker", request.worker},
                         {"bytes", request.exclusive ? capacity_ : request.bytes},
                         {"exclusive", request.exclusive},
                         {"state", kWaiting},
                         {"seq", seq},
                         {"what", request.what}});
      changed = true;
      return 0;
    });
  } catch (const std::exception& e) {
    if (notice && !warned_.exchange(true))
      notice(fmt::format("GPU memory is not coordinated with other processes ({})", e.what()));
    return t;
  }
  t.owner_ = this;
  t.id_ = id;
  bool told = false, queued = false;
  auto pause = std::chrono::milliseconds(50);
  for (;;) {
    std::vector<std::pair<pid_t, uint64_t>> processes;
    if (watch_)
      if (auto p = watch_->process_memory()) processes = std::move(*p);
    Decision d;
    try {
      d = locked([&](nlohmann::json& entries, bool& changed) {
        Decision got = decide(entries, id, capacity_, processes);
        if (got.admit)
          for (auto& e : entries)
            if (e.value("id", "") == id) {
              e["state"] = kAdmitted;
              changed = true;
            }
        return got;
      });
    } catch (const std::exception&) {
      d.admit = true;  // the ledger broke under us: go, as without one
    }
    if (d.admit) {
      t.shared_ = d.holders > 0;
      break;
    }
    if (!wait) return std::nullopt;  // the ticket's destructor takes the entry out again
    if (!told && notice) {
      notice(fmt::format("waiting for GPU memory ({}): {}", request.what, d.why));
      told = true;
    }
    queued = true;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
  // Granted at the first look is no wait (the ledger's lock takes a millisecond): a wait is
  // time spent queued, and the console said so.
  t.waited_ = queued ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() : 0.0;
  if (told && notice) notice(fmt::format("GPU memory granted ({}) after {:.1f} s", request.what, t.waited_));
  return t;
}

bool GpuAdmission::others_hold(const Ticket* mine) const {
  if (!usable_) return false;
  const std::string own = mine ? mine->id_ : std::string();
  try {
    return locked([&](nlohmann::json& entries, bool&) {
      for (const auto& e : entries)
        if (e.value("state", "") == kAdmitted && e.value("id", "") != own) return true;
      return false;
    });
  } catch (const std::exception&) {
    return false;
  }
}

GpuAdmission::Ticket::~Ticket() { release(); }

GpuAdmission::Ticket::Ticket(Ticket&& o) noexcept
    : owner_(std::exchange(o.owner_, nullptr)), id_(std::move(o.id_)), waited_(o.waited_), shared_(o.shared_) {}

GpuAdmission::Ticket& GpuAdmission::Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = std::exchange(o.owner_, nullptr);
    id_ = std::move(o.id_);
    waited_ = o.waited_;
    shared_ = o.shared_;
  }
  return *this;
}

void GpuAdmission::Ticket::release() {
  if (owner_) owner_->remove(id_);
  owner_ = nullptr;
}

}  // namespace kagent
