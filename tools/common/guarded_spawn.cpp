#include "common/guarded_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>
#include <system_error>

#include "common/fd.h"
#include "common/stop_signals.h"

namespace kagent {

namespace {

// Fds of the program; the guard keeps one more, the exec-error pipe, right after them.
constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;

// The guard's parent-death signal: its handler takes the whole group down. Not SIGTERM, which
// Slurm sends every process of a job step: the guard and its program ignore that one (below),
// so only kagent decides when a compile ends. Read before the fork (SIGRTMIN is glibc's call).
int parent_death_signal() {
  static const int sig = SIGRTMIN + 1;
  return sig;
}

void kill_group(int) { ::kill(0, SIGKILL); }

// From here on: async-signal-safe calls only (we are a fork of a threaded process).

void reset_signals() {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);  // SIGKILL/SIGSTOP just fail
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void fail(int err_fd) {
  int e = errno;
  (void)!::write(err_fd, &e, sizeof e);
  ::_exit(127);
}

void close_from(unsigned lowest) {
  if (::close_range(lowest, ~0U, 0) == 0) return;
  struct rlimit r{};
  rlim_t max = ::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? r.rlim_cur : 65536;
  for (rlim_t fd = lowest; fd < max; ++fd) ::close(static_cast<int>(fd));
}

// Puts the program's fds in place (0-2, and 3-4 for protocol pipes) and the exec-error pipe
// right after them; closes everything else. Returns the error pipe's new number.
int arrange_fds(const GuardedChild& c, int err_fd) {
  // Sources first go above every target, so no dup2 below overwrites one not yet moved.
  auto high = [&](int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD, 16); };
  int out = high(c.output_fd), req = high(c.request_fd), rep = high(c.reply_fd), err = high(err_fd);
  if (err < 0) ::_exit(127);
  if (c.stdin_null) {
    int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0) fail(err);
  }
  if (c.output_file) {
    out = ::open(c.output_file, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out < 0) fail(err);
  }
  if (out >= 0 && (::dup2(out, 1) < 0 || ::dup2(out, 2) < 0)) fail(err);
  if (req >= 0 && ::dup2(req, kRequestFd) < 0) fail(err);
  if (rep >= 0 && ::dup2(rep, kReplyFd) < 0) fail(err);
  const int err_target = (req >= 0 || rep >= 0) ? kReplyFd + 1 : kRequestFd;
  if (::dup2(err, err_target) < 0) fail(err);
  ::fcntl(err_target, F_SETFD, FD_CLOEXEC);
  // The guard never execs, so O_CLOEXEC does not protect kagent's other pipes from it: a copy
  // of another child's output pipe held here would delay that child's end-of-file.
  close_from(static_cast<unsigned>(err_target + 1));
  return err_target;
}

[[noreturn]] void exec_program(const GuardedChild& c, int err_fd, pid_t guard) {
  if (c.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // if the guard itself is killed
    if (::getppid() != guard) ::_exit(127);
  }
  if (c.address_space) {
    struct rlimit r{*c.address_space, *c.address_space};
    if (::setrlimit(RLIMIT_AS, &r) != 0) fail(err_fd);
  }
  // Best effort: more niceness is always allowed, and a program at the old priority still runs.
  if (c.nice > 0) (void)::nice(c.nice);
  if (c.idle_priority) {
    const sched_param none{};
    (void)::sched_setscheduler(0, SCHED_IDLE, &none);
  }
  if (c.cpus) (void)::sched_setaffinity(0, sizeof(cpu_set_t), &*c.cpus);  // best effort, as nice
  if (c.cwd && ::chdir(c.cwd) != 0) fail(err_fd);
  ::execve(c.path, c.argv, c.envp);
  fail(err_fd);
}

[[noreturn]] void run_guard(const GuardedChild& c, int err_fd, pid_t parent, int death_signal) {
  ::setpgid(0, 0);
  reset_signals();
  if (c.die_with_parent) {
    struct sigaction sa{};
    sa.sa_handler = kill_group;
    ::sigaction(death_signal, &sa, nullptr);
    ::prctl(PR_SET_PDEATHSIG, death_signal);
    if (::getppid() != parent) kill_group(0);  // the parent died before prctl took effect
    // A stop from outside is kagent's to act on (stop_signals.h): had it killed the compiler
    // first, the failed compile would reach the turn before kagent knew of any stop.
    ignore_stop_signals();
  }
  const int err = arrange_fds(c, err_fd);
  const pid_t guard = ::getpid();
  const pid_t program = ::fork();
  if (program < 0) fail(err);
  if (program == 0) exec_program(c, err, guard);
  ::close(err);
  int status = 0;
  while (::waitpid(program, &status, 0) < 0)
    if (errno != EINTR) ::_exit(127);
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  // Die of the same signal, without a core file of the guard.
  const int sig = WTERMSIG(status);
  struct rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  ::kill(guard, sig);
  ::_exit(128 + sig);
}

}  // namespace

std::string resolve_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

pid_t spawn_guarded(const GuardedChild& c) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  Fd err_read(fds[0]), err_write(fds[1]);
  const pid_t parent = ::getpid();
  const int death_signal = parent_death_signal();
  const pid_t guard = ::fork();
  if (guard < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (guard == 0) run_guard(c, err_write.get(), parent, death_signal);
  // Also set here, so the parent's kill(-guard) cannot race the guard's own setpgid.
  ::setpgid(guard, guard);
  err_write.reset();
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(err_read.get(), &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status;
    while (::waitpid(guard, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::system_error(child_errno, std::generic_category(), std::string("cannot start ") + c.path);
  }
  return guard;
}

}  // namespace kagent
