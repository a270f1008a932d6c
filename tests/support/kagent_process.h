// The real `kagent` binary as a user runs it, for the CLI tests: exactly the environment the
// test gives (plus HOME, PATH, a cache folder and TMPDIR inside the test's own folder, so a
// developer's keys, config and caches never leak in and a killed run's worker logs and
// scratch folders go with the test's folder), stdout and stderr captured to files.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/files.h"

namespace kagent::testing {

struct KagentRun {
  int status = -1;  // exit status; 128+N for a signal
  std::string out, err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

// How a test talks to kagent beyond arguments and environment: text for its stdin (else
// /dev/null), and stderr on a pseudo-terminal (as a user at a terminal sees it) instead of a file.
struct KagentIo {
  std::string input;
  bool stderr_terminal = false;
};

// A started kagent in its own process group (a kill takes its workers along). A test that
// ends early (a failed REQUIRE) leaves no kagent running: one not waited for is killed with its
// group, and reaped, when this goes out of scope.
class KagentProcess {
 public:
  pid_t pid = -1;
  std::string out, err;  // where its output goes
  int pty = -1;          // the terminal's master side when stderr is a terminal

  KagentProcess() = default;
  KagentProcess(std::string out_file, std::string err_file) : out(std::move(out_file)), err(std::move(err_file)) {}
  KagentProcess(KagentProcess&& o) noexcept
      : pid(std::exchange(o.pid, -1)), out(std::move(o.out)), err(std::move(o.err)), pty(std::exchange(o.pty, -1)) {}
  KagentProcess& operator=(KagentProcess&& o) noexcept {
    if (this != &o) {
      stop();
      pid = std::exchange(o.pid, -1);
      out = std::move(o.out);
      err = std::move(o.err);
      pty = std::exchange(o.pty, -1);
    }
    return *this;
  }
  KagentProcess(const KagentProcess&) = delete;
  KagentProcess& operator=(const KagentProcess&) = delete;
  ~KagentProcess() { stop(); }

  KagentRun wait() {
    int ws = 0;
    ::waitpid(pid, &ws, 0);
    pid = -1;  // reaped
    KagentRun r;
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r.out = kagent::read_file(out);
    r.err = pty < 0 ? kagent::read_file(err) : drain_terminal();
    return r;
  }

 private:
  // What kagent wrote to the terminal, without the terminal's carriage returns.
  std::string drain_terminal() {
    std::string text;
    char buf[4096];
    pollfd pfd{pty, POLLIN, 0};
    while (::poll(&pfd, 1, 200) > 0) {
      const ssize_t n = ::read(pty, buf, sizeof buf);
      if (n <= 0) break;  // EIO once every writer is gone
      for (ssize_t i = 0; i < n; ++i)
        if (buf[i] != '\r') text += buf[i];
    }
    ::close(std::exchange(pty, -1));
    return text;
  }

  // Kills a kagent nobody waited for, with its group, and reaps it. One a test reaped itself
  // (waitpid: ECHILD) is left alone: its pid may belong to another process by now.
  void stop() noexcept {
    if (pid > 0) {
      int ws = 0;
      const pid_t r = ::waitpid(pid, &ws, WNOHANG);
      if (r == 0 || r == pid) ::kill(-pid, SIGKILL);  // running, or just ended: what is left of its group too
      if (r == 0) ::waitpid(pid, &ws, 0);
      pid = -1;
    }
    if (pty >= 0) ::close(std::exchange(pty, -1));
  }
};

// Starts KAGENT_BINARY_DIR/kagent `args` in `cwd` (which also holds HOME, the cache, TMPDIR
// and the captured output) with `env`.
inline KagentProcess spawn_kagent(const std::vector<std::string>& args, std::vector<std::string> env,
                                  const std::string& cwd, const KagentIo& io = {}) {
  KagentProcess p(cwd + "/kagent.out", cwd + "/kagent.err");
  const std::string input = cwd + "/kagent.in";
  if (!io.input.empty()) std::ofstream(input) << io.input;
  int terminal = -1;
  if (io.stderr_terminal && ::openpty(&p.pty, &terminal, nullptr, nullptr, nullptr) != 0) p.pty = -1;
  env.push_back("HOME=" + cwd);
  const auto given = [&env](const std::string& name) {
    for (const auto& v : env)
      if (v.rfind(name + "=", 0) == 0) return true;
    return false;
  };
  if (!given("KAGENT_CACHE_DIR")) env.push_back("KAGENT_CACHE_DIR=" + cwd + "/cache");
  if (!given("TMPDIR")) {
    std::filesystem::create_directories(cwd + "/tmp");
    env.push_back("TMPDIR=" + cwd + "/tmp");
  }
  if (const char* path = std::getenv("PATH")) env.push_back(std::string("PATH=") + path);
  std::vector<std::string> argv = {std::string(KAGENT_BINARY_DIR) + "/kagent"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t parent = ::getpid();
  p.pid = ::fork();
  if (p.pid == 0) {
    // kagent (and through it its workers) goes with a test or benchmark that is killed.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(125);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    if (p.pty >= 0) ::close(p.pty);
    const int o = ::open(p.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = terminal >= 0 ? terminal : ::open(p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open(io.input.empty() ? "/dev/null" : input.c_str(), O_RDONLY);
    ::dup2(o, 1), ::dup2(e, 2), ::dup2(in, 0);
    std::vector<char*> av, ev;
    for (auto& a : argv) av.push_back(a.data());
    for (auto& v : env) ev.push_back(v.data());
    av.push_back(nullptr), ev.push_back(nullptr);
    ::setpgid(0, 0);
    ::execve(av[0], av.data(), ev.data());
    ::_exit(127);
  }
  if (terminal >= 0) ::close(terminal);
  return p;
}

// Runs it to the end; sigint_after_ms > 0 sends SIGINT after that long.
inline KagentRun run_kagent(const std::vector<std::string>& args, const std::vector<std::string>& env,
                            const std::string& cwd, int sigint_after_ms = 0, const KagentIo& io = {}) {
  KagentProcess p = spawn_kagent(args, env, cwd, io);
  if (sigint_after_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(sigint_after_ms));
    ::kill(p.pid, SIGINT);
  }
  return p.wait();
}

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace kagent::testing
