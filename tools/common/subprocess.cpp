#include "common/subprocess.h"

#include "common/guarded_spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

extern char** environ;

namespace kagent {

std::string ExitInfo::describe() const {
  if (exited) return "exit " + std::to_string(code);
  if (signaled) return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "still running";
}

namespace {

std::pair<Fd, Fd> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  return {Fd(fds[0]), Fd(fds[1])};
}

ExitInfo decode(int status, const struct rusage& usage) {
  ExitInfo e;
  e.peak_rss_kb = usage.ru_maxrss;
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  e.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  }
  return e;
}

// The child's environment: ours, with env_set entries added or replaced.
std::vector<std::string> build_env(const std::vector<std::string>& env_set) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv;
  }
  for (const auto& kv : env_set) {
    auto eq = kv.find('=');
    env[kv.substr(0, eq)] = kv;
  }
  std::vector<std::string> out;
  for (auto& [k, v] : env) out.push_back(v);
  return out;
}

// posix_spawn's attribute and file-action objects, released however we leave.
struct SpawnAttr {
  posix_spawnattr_t attr;
  SpawnAttr() { posix_spawnattr_init(&attr); }
  ~SpawnAttr() { posix_spawnattr_destroy(&attr); }
};
struct SpawnActions {
  posix_spawn_file_actions_t fa;
  SpawnActions() { posix_spawn_file_actions_init(&fa); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&fa); }
};

// argv and envp as exec wants them, owning their strings.
struct ExecArgs {
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp;
  explicit ExecArgs(const SpawnOptions& opts) : env_strings(build_env(opts.env_set)) {
    for (const auto& a : opts.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
};

}  // namespace

Subprocess::Subprocess(const SpawnOptions& opts) {
  if (opts.argv.empty()) throw std::invalid_argument("Subprocess: empty argv");
  if (opts.die_with_parent || opts.address_space_limit || opts.nice > 0 || opts.idle_priority || !opts.cpus.empty()) {
    spawn_with_guard(opts);
    return;
  }
  SpawnAttr attr;
  SpawnActions actions;
  // Own process group: kill() takes nvcc's children or a forking candidate with it.
  posix_spawnattr_setpgroup(&attr.attr, 0);
  // Signals the parent ignores or blocks must not leak into the child.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr.attr, &none);
  posix_spawnattr_setsigdefault(&attr.attr, &all);
  posix_spawnattr_setflags(&attr.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  Fd out_read, out_write, req_read, req_write, rep_read, rep_write;
  if (opts.stdin_null) posix_spawn_file_actions_addopen(&actions.fa, 0, "/dev/null", O_RDONLY, 0);
  if (opts.output_file) {
    posix_spawn_file_actions_addopen(&actions.fa, 1, opts.output_file->c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions.fa, 1, 2);
  } else {
    std::tie(out_read, out_write) = make_pipe();
    posix_spawn_file_actions_adddup2(&actions.fa, out_write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions.fa, out_write.get(), 2);
  }
  if (opts.protocol_pipes) {
    std::tie(req_read, req_write) = make_pipe();
    std::tie(rep_read, rep_write) = make_pipe();
    posix_spawn_file_actions_adddup2(&actions.fa, req_read.get(), 3);
    posix_spawn_file_actions_adddup2(&actions.fa, rep_write.get(), 4);
  }
  if (opts.cwd) posix_spawn_file_actions_addchdir_np(&actions.fa, opts.cwd->c_str());

  ExecArgs args(opts);
  int rc = posix_spawnp(&pid_, args.argv[0], &actions.fa, &attr.attr, args.argv.data(), args.envp.data());
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "cannot start " + opts.argv[0]);
  output_ = std::move(out_read);
  request_ = std::move(req_write);
  reply_ = std::move(rep_read);
  // A worker that dies must give EPIPE, not kill the orchestrator.
  ::signal(SIGPIPE, SIG_IGN);
}

void Subprocess::spawn_with_guard(const SpawnOptions& opts) {
  ExecArgs args(opts);
  const std::string path = resolve_in_path(opts.argv[0]);
  Fd out_read, out_write, req_read, req_write, rep_read, rep_write;
  if (!opts.output_file) std::tie(out_read, out_write) = make_pipe();
  if (opts.protocol_pipes) {
    std::tie(req_read, req_write) = make_pipe();
    std::tie(rep_read, rep_write) = make_pipe();
  }
  GuardedChild c;
  c.path = path.c_str();
  c.argv = args.argv.data();
  c.envp = args.envp.data();
  c.cwd = opts.cwd ? opts.cwd->c_str() : nullptr;
  c.stdin_null = opts.stdin_null;
  c.output_file = opts.output_file ? opts.output_file->c_str() : nullptr;
  c.output_fd = out_write.get();
  c.request_fd = req_read.get();
  c.reply_fd = rep_write.get();
  if (opts.address_space_limit) c.address_space = static_cast<rlim_t>(*opts.address_space_limit);
  c.die_with_parent = opts.die_with_parent;
  c.nice = opts.nice;
  c.idle_priority = opts.idle_priority;
  if (!opts.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : opts.cpus)
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
    c.cpus = set;
  }
  pid_ = spawn_guarded(c);
  output_ = std::move(out_read);
  request_ = std::move(req_write);
  reply_ = std::move(rep_read);
  ::signal(SIGPIPE, SIG_IGN);
}

Subprocess::Subprocess(Subprocess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      exit_(std::move(o.exit_)),
      output_(std::move(o.output_)),
      request_(std::move(o.request_)),
      reply_(std::move(o.reply_)) {}

Subprocess& Subprocess::operator=(Subprocess&& o) noexcept {
  if (this != &o) {
    release_all();
    pid_ = std::exchange(o.pid_, -1);
    exit_ = std::move(o.exit_);
    output_ = std::move(o.output_);
    request_ = std::move(o.request_);
    reply_ = std::move(o.reply_);
  }
  return *this;
}

Subprocess::~Subprocess() { release_all(); }

void Subprocess::release_all() noexcept {
  if (pid_ > 0 && !exit_) {
    try {
      kill();
    } catch (...) {
    }
  }
  pid_ = -1;
}

std::optional<ExitInfo> Subprocess::poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  struct rusage usage{};
  pid_t r = ::wait4(pid_, &status, WNOHANG, &usage);
  if (r == pid_) exit_ = decode(status, usage);
  return exit_;
}

std::optional<ExitInfo> Subprocess::wait(std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) {
    if (exit_ || pid_ <= 0) return exit_;
    int status = 0;
    struct rusage usage{};
    while (::wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    exit_ = decode(status, usage);
    return exit_;
  }
  auto deadline = std::chrono::steady_clock::now() + *timeout;
  auto step = std::chrono::milliseconds(1);
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, std::chrono::milliseconds(20));
  }
  return exit_;
}

ExitInfo Subprocess::kill() {
  if (exit_) return *exit_;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // the group
    ::kill(pid_, SIGKILL);   // and the leader, in case it left the group
  }
  return *wait();
}

bool Subprocess::running() { return pid_ > 0 && !poll(); }

RunResult run_command(const SpawnOptions& opts_in, std::chrono::milliseconds timeout) {
  SpawnOptions opts = opts_in;
  opts.output_file.reset();
  opts.protocol_pipes = false;
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + timeout;
  opts.die_with_parent = true;
  Subprocess proc(opts);
  RunResult result;
  char buf[65536];
  bool open = true;
  // Drain the pipe while waiting so a chatty child never blocks on a full pipe.
  while (open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd p{proc.output_fd(), POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r > 0) {
      ssize_t n = ::read(proc.output_fd(), buf, sizeof buf);
      if (n > 0) result.output.append(buf, static_cast<size_t>(n));
      else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) open = false;
    }
  }
  if (result.timed_out) {
    result.exit = proc.kill();
  } else {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto e = proc.wait(std::max(left, std::chrono::milliseconds(0)));
    if (!e) {
      result.timed_out = true;
      result.exit = proc.kill();
    } else {
      result.exit = *e;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kagent
