#include "sandbox/violation_monitor.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "sandbox/cgroup_pids.h"
#include "sandbox/process_table.h"
#include "sandbox/scratch_dir.h"
#include "sandbox/seccomp_filter.h"

namespace kagent::sandbox {

namespace {

constexpr size_t kMaxDetails = 16;
constexpr char kListenerMessage[] = "listener";
constexpr char kNoListenerMessage[] = "no-listener";
constexpr char kEndMessage[] = "end";
// "take": what was recorded since the last answer, without the end's process scan and kills
// (a request's start: the previous end killed what was left).
constexpr char kTakeMessage[] = "take";
// "cgroup:<dir>" names the worker's pids cgroup (cgroup_pids.h); "limit:<extra>" asks for its
// pids.max, answered "limit-ok:<max>" or "limit-error:<why>". Each is taken once, before any
// candidate code runs: one sent later (by candidate code that found the channel) is ignored.
constexpr char kCgroupPrefix[] = "cgroup:";
constexpr char kLimitPrefix[] = "limit:";

bool is_within(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path.compare(0, dir.size(), dir) == 0 && (path.size() == dir.size() || path[dir.size()] == '/');
}

std::string family_name(int family) {
  switch (family) {
    case AF_INET: return "AF_INET";
    case AF_INET6: return "AF_INET6";
    case AF_PACKET: return "AF_PACKET";
#ifdef AF_VSOCK
    case AF_VSOCK: return "AF_VSOCK";
#endif
    default: return fmt::format("family {}", family);
  }
}

// A NUL-terminated string in another process, read page by page so that an unmapped page
// after the string does not fail the read.
bool read_remote_string(pid_t pid, uint64_t address, std::string& out) {
  constexpr size_t kPage = 4096, kMax = 4096;
  char buf[kMax];
  size_t got = 0;
  while (got < kMax) {
    size_t want = std::min(kPage - ((address + got) % kPage), kMax - got);
    iovec local{buf + got, want};
    iovec remote{reinterpret_cast<void*>(address + got), want};
    ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) return false;
    if (const void* nul = std::memchr(buf + got, '\0', static_cast<size_t>(n))) {
      out.assign(buf, static_cast<size_t>(static_cast<const char*>(nul) - buf));
      return true;
    }
    got += static_cast<size_t>(n);
  }
  return false;
}

std::string link_target(const std::string& link) {
  char buf[4096];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) return {};
  return std::string(buf, static_cast<size_t>(n));
}

bool is_process_creation(long nr) {
#ifdef __NR_fork
  if (nr == __NR_fork) return true;
#endif
#ifdef __NR_vfork
  if (nr == __NR_vfork) return true;
#endif
  return nr == __NR_clone;
}

class Monitor {
 public:
  Monitor(pid_t worker, Fd channel, const MonitorRules& rules)
      : worker_(worker), self_(::getpid()), parent_at_start_(::getppid()), channel_(std::move(channel)), rules_(rules) {}

  [[noreturn]] void run();

 private:
  void record(int Violations::*counter, std::string detail) {
    ++(violations_.*counter);
    if (violations_.details.size() < kMaxDetails) violations_.details.push_back(std::move(detail));
  }
  // Live processes below the monitor, the worker itself not counted.
  std::vector<pid_t> worker_processes() const {
    std::vector<pid_t> out;
    for (pid_t p : descendants_of(self_))
      if (p != worker_) out.push_back(p);
    return out;
  }
  // Tasks (threads) of the worker and of every process below the monitor: what RLIMIT_NPROC
  // counts against the worker's own uid.
  int worker_tasks(const std::vector<pid_t>& processes) const {
    int n = 0;
    for (pid_t p : processes)
      if (auto info = read_process(p)) n += info->threads;
    if (auto self = read_process(worker_)) n += self->threads;
    return n;
  }
  void handle_notification();
  void handle_channel();
  void reap();
  [[noreturn]] void end_like_worker(int status);
  // The worker killed first; then as end_like_worker, the monitor dying of `sig` (when kagent
  // has ended: no one reads it).
  [[noreturn]] void end_now(int sig);
  // True once the orchestrator has ended (the pidfd reads, or this process was reparented).
  bool orchestrator_gone() const;

  pid_t worker_, self_, parent_at_start_;
  Fd channel_, listener_, signals_, orchestrator_;
  MonitorRules rules_;
  Violations violations_;
  std::optional<PidsCgroup> cgroup_;
  bool cgroup_named_ = false, limit_set_ = false;
  uint64_t pids_limit_ = 0, pids_refused_ = 0;  // pids.events' "max" count already recorded
  seccomp_notif_sizes sizes_{};
  std::unique_ptr<char[]> request_buf_, response_buf_;
};

// The absolute path a call names (`address` in the caller's memory, relative to `dirfd` or
// its working directory), with the folder it lies in resolved through symlinks where it exists
// (a link inside the scratch folder may point out of it); "" when it cannot be read.
std::string call_path(pid_t pid, int dirfd, uint64_t address) {
  std::string path;
  if (!read_remote_string(pid, address, path) || path.empty()) return {};
  const std::string base = path[0] == '/'          ? "/"
                           : dirfd == AT_FDCWD     ? link_target(fmt::format("/proc/{}/cwd", pid))
                                                   : link_target(fmt::format("/proc/{}/fd/{}", pid, dirfd));
  if (base.empty() || base[0] != '/') return {};
  const std::string full = normalize_path(base, path);
  const auto slash = full.rfind('/');
  char resolved[PATH_MAX];
  const std::string parent = slash == 0 ? "/" : full.substr(0, slash);
  if (::realpath(parent.c_str(), resolved) == nullptr) return full;
  const std::string leaf = full.substr(slash + 1);
  return std::string(resolved) == "/" ? "/" + leaf : std::string(resolved) + "/" + leaf;
}

// RLIMIT_NPROC of `pid` (its soft limit), when one binds it: prlimit, or /proc/<pid>/limits
// where prlimit is not allowed (it needs CAP_SYS_RESOURCE, which containers often drop).
std::optional<uint64_t> process_limit_of(pid_t pid) {
  rlimit lim{};
  if (::prlimit(pid, RLIMIT_NPROC, nullptr, &lim) == 0)
    return lim.rlim_cur == RLIM_INFINITY ? std::nullopt : std::optional<uint64_t>(lim.rlim_cur);
  std::ifstream in(fmt::format("/proc/{}/limits", pid));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max processes", 0) != 0) continue;
    std::istringstream fields(line.substr(std::strlen("Max processes")));
    std::string soft;
    fields >> soft;
    if (soft.empty() || soft == "unlimited") return std::nullopt;
    try {
      return std::stoull(soft);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

void Monitor::handle_notification() {
  auto* req = reinterpret_cast<seccomp_notif*>(request_buf_.get());
  auto* resp = reinterpret_cast<seccomp_notif_resp*>(response_buf_.get());
  std::memset(req, 0, sizes_.seccomp_notif);
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, req) != 0) return;  // the caller died meanwhile
  std::memset(resp, 0, sizes_.seccomp_notif_resp);
  resp->id = req->id;
  resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;  // the kernel's own checks still apply
  const long nr = req->data.nr;
  const auto* args = req->data.args;
  auto refuse = [&](int Violations::*counter, std::string detail, int error) {
    record(counter, std::move(detail));
    resp->flags = 0;
    resp->error = -error;
  };
  if (nr == __NR_socket) {
    refuse(&Violations::network, fmt::format("socket({})", family_name(static_cast<int>(args[0]))), EACCES);
  } else if (is_process_creation(nr)) {
    // The monitor decides before the kernel: a process RLIMIT_NPROC would refuse (threads
    // count there too) is refused here as well, and so recorded, whatever the thread count.
    const std::vector<pid_t> live = worker_processes();
    const auto limit = process_limit_of(static_cast<pid_t>(req->pid));
    if (static_cast<int>(live.size()) >= rules_.process_limit) {
      refuse(&Violations::processes, fmt::format("more than {} processes", rules_.process_limit), EAGAIN);
    } else if (limit && static_cast<uint64_t>(worker_tasks(live)) >= *limit) {
      refuse(&Violations::processes, fmt::format("more than {} tasks (RLIMIT_NPROC)", *limit), EAGAIN);
    }
  } else {
    // open(path, flags), creat(path, mode), openat(dirfd, path, flags), or a call that
    // changes the file tree (watched_path_calls: mkdir, unlink, rename, ...).
    std::vector<std::pair<int, int>> paths;
    std::string verb = "open";
    if (const PathCall* call = watched_path_call(nr)) {
      paths = call->paths;
      verb = call->verb;
    } else {
      paths = {nr == __NR_openat ? std::pair{1, 0} : std::pair{0, -1}};
    }
    std::vector<std::string> full;
    for (const auto& [path_arg, dirfd_arg] : paths)
      full.push_back(call_path(static_cast<pid_t>(req->pid),
                               dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(args[dirfd_arg]), args[path_arg]));
    // Only while the call still waits is req->pid surely the caller (not a reused pid).
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0) return;
    for (const auto& f : full)
      if (!f.empty() && classify_write(f, rules_) == WriteVerdict::Violation) {
        refuse(&Violations::filesystem, verb == "open" ? fmt::format("open {} for writing", f) : verb + " " + f, EACCES);
        break;
      }
  }
  ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, resp);  // ENOENT: the caller is gone
}

void Monitor::handle_channel() {
  char data[64];
  char control[CMSG_SPACE(sizeof(int))];
  iovec iov{data, sizeof data - 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(channel_.get(), &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0) {
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) channel_.reset();  // the worker is ending
    return;
  }
  data[n] = '\0';
  if (std::strcmp(data, kListenerMessage) == 0) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        listener_ = Fd(fd);
      }
  } else if (std::strncmp(data, kCgroupPrefix, sizeof kCgroupPrefix - 1) == 0) {
    if (!cgroup_named_) cgroup_ = PidsCgroup{data + sizeof kCgroupPrefix - 1, false};
    cgroup_named_ = true;
  } else if (std::strncmp(data, kLimitPrefix, sizeof kLimitPrefix - 1) == 0) {
    std::string answer = "limit-error:no cgroup";
    if (cgroup_ && !limit_set_) {
      std::string error;
      const int extra = std::atoi(data + sizeof kLimitPrefix - 1);
      if (auto limit = limit_pids(*cgroup_, extra, &error)) {
        pids_limit_ = *limit;
        pids_refused_ = pids_refusals(*cgroup_);
        answer = fmt::format("limit-ok:{}", *limit);
      } else {
        answer = "limit-error:" + error;
      }
    } else if (limit_set_) {
      answer = "limit-error:already set";
    }
    limit_set_ = true;
    ssize_t sent = ::send(channel_.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
    (void)sent;
  } else if (std::strcmp(data, kEndMessage) == 0 || std::strcmp(data, kTakeMessage) == 0) {
    // Forks and threads the kernel refused at pids.max: it binds root too, and says how often.
    if (cgroup_ && pids_limit_ > 0) {
      const uint64_t refused = pids_refusals(*cgroup_);
      if (refused > pids_refused_)
        record(&Violations::processes, fmt::format("{} forks or threads refused at the cgroup's limit of {} tasks",
                                                   refused - pids_refused_, pids_limit_));
      pids_refused_ = refused;
    }
    if (std::strcmp(data, kEndMessage) == 0) {
      for (pid_t p : worker_processes())
        if (::kill(p, SIGKILL) == 0) violations_.killed.push_back(p);
      if (!violations_.killed.empty())
        record(&Violations::processes, fmt::format("{} processes left running (killed)", violations_.killed.size()));
    }
    std::string reply = nlohmann::json(violations_).dump();
    ssize_t sent = ::send(channel_.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
    (void)sent;
    violations_ = Violations();
  }
}

void Monitor::reap() {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0)
    if (pid == worker_) end_like_worker(status);
}

void Monitor::end_like_worker(int status) {
  for (pid_t p : worker_processes()) ::kill(p, SIGKILL);
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  if (!rules_.remove_at_end.empty()) remove_tree(rules_.remove_at_end);
  if (cgroup_) kill_and_remove_pids_cgroup(cgroup_->dir);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

void Monitor::end_now(int sig) {
  ::kill(worker_, SIGKILL);
  while (::waitpid(worker_, nullptr, 0) < 0 && errno == EINTR) {
  }
  end_like_worker(sig);  // a status of `sig` alone reads as "killed by sig"
}

bool Monitor::orchestrator_gone() const {
  if (rules_.orchestrator <= 0) return false;
  if (orchestrator_) {
    pollfd p{orchestrator_.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
  }
  // No pidfd (a kernel before 5.3): where the orchestrator started this process directly (no
  // wrapper in between), its end shows as a new parent.
  return parent_at_start_ == rules_.orchestrator && ::getppid() != rules_.orchestrator;
}

void Monitor::run() {
  ::prctl(PR_SET_NAME, "kagent-monitor", 0, 0, 0);
  // Orphans of the candidate's processes come to the monitor, which can then count and kill them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  ::signal(SIGPIPE, SIG_IGN);
  // Everything else the orchestrator handed over (the protocol pipes) belongs to the worker:
  // the orchestrator must see them close when the worker dies.
  for (int fd = 3; fd < 1024; ++fd)
    if (fd != channel_.get()) ::close(fd);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);  // blocked by the caller before the fork: no death goes unseen
  signals_ = Fd(::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
  if (rules_.orchestrator > 0) {
#ifdef SYS_pidfd_open
    orchestrator_ = Fd(static_cast<int>(::syscall(SYS_pidfd_open, rules_.orchestrator, 0)));
    if (!orchestrator_ && errno == ESRCH) end_now(SIGKILL);  // it ended before the monitor could watch it
#endif
    if (orchestrator_gone()) end_now(SIGKILL);
  }
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes_) != 0) {
    sizes_.seccomp_notif = sizeof(seccomp_notif);
    sizes_.seccomp_notif_resp = sizeof(seccomp_notif_resp);
  }
  sizes_.seccomp_notif = std::max<uint16_t>(sizes_.seccomp_notif, sizeof(seccomp_notif));
  sizes_.seccomp_notif_resp = std::max<uint16_t>(sizes_.seccomp_notif_resp, sizeof(seccomp_notif_resp));
  request_buf_ = std::make_unique<char[]>(sizes_.seccomp_notif);
  response_buf_ = std::make_unique<char[]>(sizes_.seccomp_notif_resp);

  for (;;) {
    reap();
    pollfd fds[4] = {{signals_.get(), POLLIN, 0},
                     {channel_.get(), POLLIN, 0},
                     {listener_.get(), POLLIN, 0},
                     {orchestrator_.get(), POLLIN, 0}};
    // A negative fd is skipped by poll; the timeout backs up a lost signalfd (and a kernel
    // without pidfd_open, where only the parent check sees the orchestrator's end).
    int r = ::poll(fds, 4, 1000);
    if (r < 0) continue;
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      while (::read(signals_.get(), &info, sizeof info) > 0) {
      }
    }
    if ((fds[3].revents & (POLLIN | POLLHUP | POLLERR)) || (!orchestrator_ && orchestrator_gone())) end_now(SIGKILL);
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) handle_channel();
    if (fds[2].revents & POLLIN) handle_notification();
    if (fds[2].revents & (POLLHUP | POLLERR)) listener_.reset();  // no process uses the filter any more
  }
}

}  // namespace

void to_json(nlohmann::json& j, const Violations& v) {
  j = {{"network", v.network},
       {"filesystem", v.filesystem},
       {"processes", v.processes},
       {"details", v.details},
       {"killed", v.killed}};
}

void from_json(const nlohmann::json& j, Violations& v) {
  v.network = j.value("network", 0);
  v.filesystem = j.value("filesystem", 0);
  v.processes = j.value("processes", 0);
  v.details = j.value("details", std::vector<std::string>{});
  v.killed = j.value("killed", std::vector<pid_t>{});
}

WriteVerdict classify_write(const std::string& path, const MonitorRules& rules) {
  for (const auto& w : rules.writable)
    if (is_within(path, w)) return WriteVerdict::Allowed;
  // Device files: which ones open is Landlock's (or the uid's) decision.
  if (is_within(path, "/dev")) return WriteVerdict::Allowed;
  // Control files of cgroups: a candidate running as root would lift its process limit or
  // leave its group through them.
  if (is_within(path, "/sys/fs/cgroup")) return WriteVerdict::Violation;
  // Thread names (/proc/self/task/N/comm) and the like: refused by the kernel's own
  // rules where they must be, and too common to be a candidate's doing.
  if (is_within(path, "/proc") || is_within(path, "/sys")) return WriteVerdict::Unrecorded;
  return WriteVerdict::Violation;
}

std::string normalize_path(const std::string& base, const std::string& path) {
  std::vector<std::string> parts;
  auto push = [&](const std::string& s) {
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find('/', start);
      if (end == std::string::npos) end = s.size();
      std::string part = s.substr(start, end - start);
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      start = end + 1;
    }
  };
  if (path.empty() || path[0] != '/') push(base);
  push(path);
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

void run_monitor(pid_t worker, Fd channel, const MonitorRules& rules) {
  Monitor(worker, std::move(channel), rules).run();
}

bool MonitorChannel::send_cgroup(const std::string& dir) {
  const std::string text = kCgroupPrefix + dir;
  return ::send(channel_.get(), text.data(), text.size(), MSG_NOSIGNAL) >= 0;
}

std::optional<uint64_t> MonitorChannel::limit_cgroup(int extra, std::string* error) {
  const std::string text = fmt::format("{}{}", kLimitPrefix, extra);
  if (::send(channel_.get(), text.data(), text.size(), MSG_NOSIGNAL) < 0) {
    if (error) *error = std::strerror(errno);
    return std::nullopt;
  }
  pollfd p{channel_.get(), POLLIN, 0};
  char buf[512];
  ssize_t n = ::poll(&p, 1, 10'000) > 0 ? ::recv(channel_.get(), buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) {
    if (error) *error = "the monitor did not answer";
    return std::nullopt;
  }
  buf[n] = '\0';
  const std::string answer(buf);
  if (answer.rfind("limit-ok:", 0) == 0) return std::strtoull(answer.c_str() + 9, nullptr, 10);
  if (error) *error = answer.rfind("limit-error:", 0) == 0 ? answer.substr(12) : answer;
  return std::nullopt;
}

bool MonitorChannel::send_listener(int listener) {
  const char* text = listener >= 0 ? kListenerMessage : kNoListenerMessage;
  iovec iov{const_cast<char*>(text), std::strlen(text)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))] = {};
  if (listener >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &listener, sizeof listener);
  }
  return ::sendmsg(channel_.get(), &msg, MSG_NOSIGNAL) >= 0;
}

Violations MonitorChannel::take() { return ask(kTakeMessage); }

Violations MonitorChannel::end_request() { return ask(kEndMessage); }

Violations MonitorChannel::ask(const char* message) {
  Violations v;
  if (!channel_) return v;
  if (::send(channel_.get(), message, std::strlen(message), MSG_NOSIGNAL) < 0) return v;
  pollfd p{channel_.get(), POLLIN, 0};
  if (::poll(&p, 1, 10'000) <= 0) return v;
  std::string buf(256 * 1024, '\0');
  ssize_t n = ::recv(channel_.get(), buf.data(), buf.size(), 0);
  if (n <= 0) return v;
  buf.resize(static_cast<size_t>(n));
  auto reply = nlohmann::json::parse(buf, nullptr, false);
  if (!reply.is_object()) return v;
  v = reply.get<Violations>();
  // The killed processes that were this process's children would stay zombies (and keep
  // counting against RLIMIT_NPROC) until reaped.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  std::vector<pid_t> left = v.killed;
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::erase_if(left, [](pid_t pid) {
      pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      return r == pid || (r < 0 && errno == ECHILD);
    });
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return v;
}

}  // namespace kagent::sandbox
