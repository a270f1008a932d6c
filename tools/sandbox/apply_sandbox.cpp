#include "sandbox/apply_sandbox.h"

#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "common/files.h"
#include "sandbox/cgroup_pids.h"
#include "sandbox/credentials.h"
#include "sandbox/landlock.h"
#include "sandbox/namespaces.h"
#include "sandbox/process_table.h"
#include "sandbox/rlimits.h"
#include "sandbox/seccomp_filter.h"

namespace kagent::sandbox {

namespace m = mechanism;

namespace {

// Device files the worker may open read-write: the usual pseudo-devices and the GPU's.
std::vector<std::string> allowed_devices() {
  std::vector<std::string> devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
  for (auto& d : nvidia_device_paths()) devices.push_back(std::move(d));
  return devices;
}

// The devices CUDA cannot work without: an unprivileged uid must be able to open them.
std::vector<std::string> essential_devices(const std::vector<std::string>& devices) {
  static const std::regex essential("/dev/(null|nvidiactl|nvidia-uvm|nvidia[0-9]+)");
  std::vector<std::string> out;
  for (const auto& d : devices)
    if (std::regex_match(d, essential)) out.push_back(d);
  return out;
}

// "1" when the driver allows GPU performance counters to admins only (its default).
bool counters_need_admin() {
  std::string params = read_file_or_empty("/proc/driver/nvidia/params");
  return params.find("RmProfilingAdminOnly: 1") != std::string::npos;
}

}  // namespace

std::unique_ptr<Sandbox> Sandbox::enter(const SandboxPolicy& policy, const EnterOptions& options) {
  std::unique_ptr<Sandbox> sb(new Sandbox(policy));
  sb->orchestrator_ = policy.orchestrator_pid > 0 ? policy.orchestrator_pid : ::getppid();
  nlohmann::json& rep = sb->report_;
  rep = {{"enabled", policy.enabled}, {"network", "none"},   {"filesystem", "none"}, {"processes", "none"},
         {"memory", "none"},          {"file_size", "none"}, {"cpu_time", "none"},   {"violations_reported", false},
         {"notes", nlohmann::json::array()}};
  if (!policy.enabled) {
    sb->note("KAGENT_SANDBOX=off: candidates' host code runs unconfined");
    return sb;
  }
  rep["limits"] = {{"memory_bytes", policy.memory_bytes},
                   {"processes", policy.processes},
                   {"file_size_bytes", policy.file_size_bytes},
                   {"cpu_seconds_per_request", policy.cpu_seconds_per_request}};
  ScratchDir scratch = prepare_scratch(policy.scratch);
  export_environment(scratch);
  rep["scratch"] = scratch.root;
  // Writes through these variables (HOME, TMPDIR, the caches) land in scratch: redirected, not refused.
  rep["redirected"] = nlohmann::json::object();
  for (const auto& [key, value] : scratch.environment) rep["redirected"][key] = value;
  const std::vector<std::string> writable = {scratch.root, "/dev/shm"};
  const std::vector<std::string> devices = allowed_devices();
  const bool root = ::geteuid() == 0;

  // The monitor: forked first, so it keeps this process's namespaces and privileges and
  // stays outside everything below.
  const bool filter_known = !build_filter({}).empty();
  if (policy.allows(m::kSeccomp) && policy.allows(m::kNotify) && filter_known && user_notification_available()) {
    int sv[2];
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      sb->note(fmt::format("notify: socketpair: {}", std::strerror(errno)));
    } else {
      ::sigprocmask(SIG_BLOCK, &chld, &old);  // the monitor must not miss the worker's death
      const pid_t parent = ::getpid();
      const pid_t orchestrator = policy.orchestrator_pid > 0 ? policy.orchestrator_pid : ::getppid();
      const pid_t child = ::fork();
      if (child < 0) {
        sb->note(fmt::format("notify: fork: {}", std::strerror(errno)));
        ::sigprocmask(SIG_SETMASK, &old, nullptr);
        ::close(sv[0]);
        ::close(sv[1]);
      } else if (child > 0) {
        ::close(sv[1]);
        const bool disposable = scratch.made_here || policy.scratch_disposable;
        run_monitor(child, Fd(sv[0]),
                    MonitorRules{writable, policy.processes, disposable ? scratch.root : "", orchestrator});
      } else {
        ::sigprocmask(SIG_SETMASK, &old, nullptr);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (::getppid() != parent) ::_exit(1);  // the monitor died before the line above
        ::close(sv[0]);
        sb->monitor_.emplace(Fd(sv[1]));
        sb->monitor_pid_ = parent;
      }
    }
  } else if (!policy.allows(m::kSeccomp) || !policy.allows(m::kNotify)) {
    sb->note("notify: disabled by KAGENT_SANDBOX_DISABLE");
  } else {
    sb->note(filter_known ? "notify: this kernel has no seccomp user notification"
                          : "seccomp: no filter for this CPU architecture");
  }
  if (!sb->monitor_) {
    // Without the monitor this process adopts what its children orphan, to kill it later.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (scratch.made_here || policy.scratch_disposable) sb->remove_at_exit_ = scratch.root;
  }

  // Processes: a pids cgroup of the worker's own, made while this process is root and has one
  // thread (cgroup_pids.h). Its limit comes in limit_resources, once the runtime's threads run.
  if (!policy.allows(m::kCgroupPids)) {
    sb->note("cgroup_pids: disabled by KAGENT_SANDBOX_DISABLE");
  } else if (!root) {
    sb->note("cgroup_pids: needs root");
  } else if (auto c = enter_pids_cgroup(::getpid()); !c.group) {
    sb->note("cgroup_pids: " + c.error);
  } else {
    sb->cgroup_ = *c.group;
    rep["cgroup"] = c.group->dir;
    if (sb->monitor_) {
      sb->monitor_->send_cgroup(c.group->dir);
    } else {
      // No monitor to set the limit later, and Landlock (below) may close the group's files to
      // this process: a limit now, with room for the threads the runtime has yet to start.
      const int allowance = policy.processes + 4 * static_cast<int>(std::thread::hardware_concurrency()) + 256;
      std::string error;
      if (auto limit = limit_pids(*c.group, allowance, &error)) rep["limits"]["cgroup_tasks"] = *limit;
      else sb->note("cgroup_pids: " + error);
    }
  }

  // Landlock and seccomp need it; it also keeps setuid programs from regaining privileges.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    sb->note(fmt::format("no_new_privs: {}", std::strerror(errno)));

  // A non-root user makes namespaces inside a user namespace of its own.
  bool userns = false;
  if (!root && (policy.allows(m::kNetNs) || policy.allows(m::kMountNs))) {
    auto u = enter_user_namespace();
    userns = u.ok;
    if (!u.ok) sb->note("user namespace: " + u.error);
  }
  const bool may_unshare = root || userns;

  // Network.
  bool netns = false;
  if (!policy.allows(m::kNetNs)) {
    sb->note("netns: disabled by KAGENT_SANDBOX_DISABLE");
  } else if (!may_unshare) {
    sb->note("netns: needs root or a user namespace");
  } else {
    auto n = enter_network_namespace();
    netns = n.ok;
    if (!n.ok) sb->note("netns: " + n.error);
  }

  // Filesystem.
  std::string filesystem = "none";
  LandlockResult landlock;
  if (!policy.allows(m::kLandlock)) {
    sb->note("landlock: disabled by KAGENT_SANDBOX_DISABLE");
  } else {
    landlock = apply_landlock(LandlockRules{writable, devices, true, true});
    if (landlock.ok) filesystem = "landlock";
    else sb->note("landlock: " + landlock.error);
  }
  rep["landlock_abi"] = landlock.abi;
  if (filesystem == "none") {
    if (!policy.allows(m::kMountNs)) {
      sb->note("mount_ns: disabled by KAGENT_SANDBOX_DISABLE");
    } else if (!may_unshare) {
      sb->note("mount_ns: needs root or a user namespace");
    } else {
      auto ns = enter_read_only_mount_namespace(writable);
      if (ns.ok) {
        filesystem = "mount_ns";
      } else {
        std::string left;
        for (const auto& w : ns.left_writable) left += " " + w;
        sb->note("mount_ns: " + ns.error + (left.empty() ? "" : "; writable:" + left));
      }
    }
  }

  // Who we run as.
  bool switched = false;
  if (root) {
    const bool keep_root = policy.uid && *policy.uid == 0;
    if (!policy.allows(m::kUid)) {
      sb->note("uid: disabled by KAGENT_SANDBOX_DISABLE: stays root");
    } else if (keep_root) {
      sb->note("uid: KAGENT_SANDBOX_UID=0: stays root (no process limit from RLIMIT_NPROC)");
    } else {
      std::optional<uint32_t> uid =
          policy.uid ? policy.uid
                     : default_sandbox_uid(::getpid(), read_file_or_empty("/proc/self/uid_map"),
                                           read_file_or_empty("/proc/self/gid_map"));
      std::vector<std::string> unreachable;
      std::vector<gid_t> groups = device_groups(essential_devices(devices), &unreachable);
      if (!uid) {
        sb->note("uid: no unprivileged uid is mapped in this user namespace");
      } else if (!unreachable.empty()) {
        sb->note("uid: stays root: " + unreachable.front() + " is open to root only");
      } else if (auto g = give_folders(scratch.folders, *uid, *uid); !g.ok) {
        sb->note("uid: " + g.error);
      } else {
        const CapabilitySet caps{{CAP_DAC_READ_SEARCH}};
        auto probe = probe_switch_user(*uid, *uid, groups, caps, options.readable, essential_devices(devices),
                                       scratch.root);
        if (!probe.ok) {
          sb->note("uid: stays root: as uid " + std::to_string(*uid) + ": " + probe.error);
          give_folders(scratch.folders, 0, 0);  // root keeps no CAP_DAC_OVERRIDE to write them otherwise
        } else if (auto s = switch_user(*uid, *uid, groups, caps); !s.ok) {
          sb->note("uid: " + s.error);  // a half-done switch is still less than root
        } else {
          if (!s.note.empty()) sb->note("uid: " + s.note);
          switched = true;
          rep["uid"] = *uid;
          rep["uid_unique"] = !policy.uid && *uid >= kUniqueUidBase;
          if (counters_need_admin())
            sb->note("uid: GPU performance counters are restricted to admins (RmProfilingAdminOnly=1) and "
                     "this worker is no longer root; KAGENT_SANDBOX_UID=0 keeps root (and the counters) "
                     "without RLIMIT_NPROC");
        }
      }
    }
    if (!switched) {
      CapabilitySet caps{{CAP_DAC_READ_SEARCH}};
      if (keep_root) caps.keep.push_back(CAP_SYS_ADMIN);  // the driver's check for performance counters
      if (auto c = limit_capabilities(caps); !c.ok) sb->note("capabilities: " + c.error);
    }
  } else if (userns) {
    if (auto c = limit_capabilities({}); !c.ok) sb->note("capabilities: " + c.error);
  }
  if (!rep.contains("uid")) rep["uid"] = ::getuid();
  if (sb->monitor_) {
    // A change of uid cleared the parent-death signal: set it again, and check the monitor
    // did not die meanwhile (without it this process must not go on).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != sb->monitor_pid_) ::_exit(1);
  }
  sb->unprivileged_ = ::getuid() != 0;
  sb->own_user_namespace_ = userns;
  if (filesystem == "none" && switched) filesystem = "uid";

  // The system call filter, last: the steps above need calls it refuses.
  bool filter = false;
  if (policy.allows(m::kSeccomp)) {
    const bool want_listener = sb->monitor_.has_value();
    InstallResult installed = install_filter(build_filter({want_listener}), want_listener);
    if (!installed.ok && want_listener) {
      sb->note("notify: " + installed.error);
      installed = install_filter(build_filter({false}), false);
    }
    filter = installed.ok;
    if (!installed.ok) sb->note("seccomp: " + installed.error);
    if (sb->monitor_) {
      sb->notify_ = installed.listener.get() >= 0 && sb->monitor_->send_listener(installed.listener.get());
      if (!sb->notify_ && installed.listener) sb->note("notify: the listener did not reach the monitor");
    }
    // installed.listener closes here: nothing in this process may answer notifications.
  } else {
    sb->note("seccomp: disabled by KAGENT_SANDBOX_DISABLE");
    if (sb->monitor_) sb->monitor_->send_listener(-1);
  }

  nlohmann::json network_layers = nlohmann::json::array(), filesystem_layers = nlohmann::json::array();
  if (netns) network_layers.push_back("netns");
  if (landlock.tcp_restricted) network_layers.push_back("landlock_tcp");
  if (filter) network_layers.push_back("seccomp");
  if (filesystem != "none") filesystem_layers.push_back(filesystem);
  if (filesystem != "uid" && switched) filesystem_layers.push_back("uid");
  if (sb->notify_) filesystem_layers.push_back("seccomp_notify");
  rep["network"] = netns ? "netns" : filter ? "seccomp" : "none";
  rep["filesystem"] = filesystem == "none" && sb->notify_ ? "seccomp_notify" : filesystem;
  rep["layers"] = {{"network", network_layers}, {"filesystem", filesystem_layers}};
  rep["seccomp"] = filter;
  rep["violations_reported"] = sb->notify_;
  rep["landlock_scoped"] = landlock.scoped;
  return sb;
}

void Sandbox::limit_resources() {
  if (!policy_.enabled) return;
  nlohmann::json& rep = report_;
  if (policy_.allows(m::kRlimitFsize)) {
    if (auto r = limit_file_size(policy_.file_size_bytes); r.ok) rep["file_size"] = "rlimit_fsize";
    else note("rlimit_fsize: " + r.error);
  }
  if (policy_.allows(m::kRlimitData)) {
    // A quarter above the watchdog's limit: the watchdog speaks first, with a clear reason.
    if (auto r = set_limit(RLIMIT_DATA, policy_.memory_bytes + policy_.memory_bytes / 4); r.ok) rep["memory"] = "rlimit_data";
    else note("rlimit_data: " + r.error);
  }
  set_limit(RLIMIT_CORE, 0);  // a crashing candidate must not write a core of the whole worker
  nlohmann::json process_layers = nlohmann::json::array();
  if (cgroup_) {
    // The monitor sets the limit where there is one (it stays root whatever this process
    // became); else this process tightens the one set at enter, where it still may.
    std::string error;
    std::optional<uint64_t> limit = monitor_ ? monitor_->limit_cgroup(policy_.processes, &error)
                                             : limit_pids(*cgroup_, policy_.processes, &error);
    const bool coarse = !limit && !monitor_ && rep["limits"].contains("cgroup_tasks");
    if (limit) rep["limits"]["cgroup_tasks"] = *limit;
    if (limit || coarse) {
      process_layers.push_back("cgroup_pids");
      if (coarse)
        note(fmt::format("cgroup_pids: the limit stays at {} tasks, set before the runtime started ({})",
                         rep["limits"]["cgroup_tasks"].get<uint64_t>(), error));
      if (!monitor_) cgroup_refused_ = pids_refusals(*cgroup_);
    } else {
      note("cgroup_pids: " + error);
    }
  }
  if (!policy_.allows(m::kRlimitNproc)) {
    note("rlimit_nproc: disabled by KAGENT_SANDBOX_DISABLE");
  } else if (!unprivileged_) {
    note("rlimit_nproc: uid 0 is exempt from it");
  } else {
    uint64_t limit = 0;
    if (auto r = limit_processes(policy_.processes, own_user_namespace_, &limit); r.ok) {
      process_layers.push_back("rlimit_nproc");
      rep["limits"]["tasks"] = limit;
    } else {
      note("rlimit_nproc: " + r.error);
    }
  }
  if (notify_) process_layers.push_back("seccomp_notify");
  rep["processes"] = process_layers.empty() ? "none" : process_layers[0];
  rep["layers"]["processes"] = process_layers;
  if (policy_.allows(m::kRlimitCpu)) rep["cpu_time"] = "rlimit_cpu";
}

namespace {

// Empties `scratch` (not empty) until a pass leaves it empty (at most 5 passes).
void empty_scratch(const std::string& scratch) {
  for (int pass = 0; pass < 5; ++pass) {
    remove_tree(scratch);
    std::error_code ec;
    if (!std::filesystem::exists(scratch, ec) || std::filesystem::is_empty(scratch, ec)) break;
  }
}

// The janitor: a process the worker forks once kagent is gone. It leaves the worker's group and
// its descriptors, kills the group (the worker with every thread at once, and what stayed in
// it), waits until the worker is dead (it is then adopted elsewhere), and only then empties the
// folder: no thread of the worker can still be making files in it. Emptied from a thread of the
// worker, the folder raced its other threads (the main one still starting, with Python's and
// torch's caches; a candidate's): what one made in a folder already passed kept that folder.
// glibc's fork leaves malloc usable in the child of a threaded process; nothing else here takes
// a lock. Never returns.
[[noreturn]] void run_janitor(pid_t worker, pid_t group, const std::string& scratch) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_NAME, "kagent-janitor", 0, 0, 0);
  // No descriptor of the worker's: its reply pipe must read end-of-file at its death, not ours.
  ::close_range(0, ~0U, 0);
  ::kill(-group, SIGKILL);
  ::kill(worker, SIGKILL);  // where the worker led no group of its own
  // Adopted by another process once every thread of the worker has exited; bounded, so the
  // janitor never outlives it by long whatever happens.
  for (int waited_ms = 0; ::getppid() == worker && waited_ms < 10000; ++waited_ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  empty_scratch(scratch);
  ::_exit(0);
}

// kagent is gone: what this process started, then this process with its group, and the folder
// once no thread of it is left (the janitor). Never returns.
[[noreturn]] void leave_without_orchestrator(const std::string& scratch) {
  static std::atomic_flag leaving;  // the watcher and the main thread may both find kagent gone
  if (leaving.test_and_set())
    for (;;) ::pause();  // the first one's janitor, or its group kill, ends this thread too
  // Its descendants first: once the worker is dead its orphans go to another reaper.
  for (pid_t p : descendants_of(::getpid())) ::kill(p, SIGKILL);
  if (!scratch.empty()) {
    const pid_t worker = ::getpid(), group = ::getpgrp();
    const pid_t janitor = ::fork();
    if (janitor == 0) run_janitor(worker, group, scratch);
    // The janitor kills this process; until it does, nothing here may touch the folder.
    if (janitor > 0)
      for (;;) ::pause();
    // No janitor (a process limit): the folder emptied from here, racing any thread still
    // making files in it, as before the janitor.
    empty_scratch(scratch);
  }
  ::kill(0, SIGKILL);  // this process's group: itself and what stayed in it
  ::_exit(1);          // not reached
}

}  // namespace

void Sandbox::watch_orchestrator() {
  if (monitor_) return;  // the monitor watches kagent through a pidfd
  // Polled: no pidfd or signal needs a call the filter may refuse, and 5 wake-ups a second are
  // nothing beside a timing.
  std::thread([orchestrator = orchestrator_, scratch = remove_at_exit_] {
    while (::getppid() == orchestrator) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    leave_without_orchestrator(scratch);
  }).detach();
}

void Sandbox::leave_if_orchestrator_gone() const {
  if (monitor_ || ::getppid() == orchestrator_) return;
  leave_without_orchestrator(remove_at_exit_);
}

Violations Sandbox::begin_request() {
  if (!policy_.enabled) return {};
  if (policy_.allows(m::kRlimitCpu)) arm_cpu_time(policy_.cpu_seconds_per_request);
  // Without a monitor nothing records between requests: end_request killed what was left.
  return monitor_ ? monitor_->take() : Violations{};
}

Sandbox::~Sandbox() {
  if (remove_at_exit_.empty()) return;
  remove_tree(remove_at_exit_);
}

Violations Sandbox::end_request() {
  if (!policy_.enabled) return {};
  if (policy_.allows(m::kRlimitCpu)) disarm_cpu_time();
  if (monitor_) return monitor_->end_request();
  // No monitor: this process is the subreaper of what its candidates started.
  Violations v;
  if (cgroup_ && report_.contains("limits") && report_["limits"].contains("cgroup_tasks")) {
    const uint64_t refused = pids_refusals(*cgroup_);
    if (refused > cgroup_refused_) {
      v.processes += static_cast<int>(refused - cgroup_refused_);
      v.details.push_back(fmt::format("{} forks or threads refused at the cgroup's limit", refused - cgroup_refused_));
    }
    cgroup_refused_ = refused;
  }
  for (pid_t p : descendants_of(::getpid()))
    if (::kill(p, SIGKILL) == 0) v.killed.push_back(p);
  for (pid_t p : v.killed) ::waitpid(p, nullptr, 0);
  if (!v.killed.empty()) {
    v.processes = static_cast<int>(v.killed.size());
    v.details.push_back(fmt::format("{} processes left running (killed)", v.killed.size()));
  }
  return v;
}

}  // namespace kagent::sandbox
