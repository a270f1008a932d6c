// Runs a test body inside the sandbox, in a forked child (the sandbox cannot be undone, and
// it must close while the process has one thread, which a fresh fork of doctest has).
#pragma once

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/subprocess.h"
#include "sandbox/apply_sandbox.h"
#include "sandbox/cgroup_pids.h"
#include "sandbox/process_table.h"
#include "temp_dir.h"

namespace sandbox_test {

namespace fs = std::filesystem;
using kagent::sandbox::Sandbox;
using kagent::sandbox::SandboxPolicy;

// A temporary folder, removed with everything in it.
using kagent::testing::TempDir;

// Small limits, a scratch folder of its own, and `disabled` mechanisms left out.
inline SandboxPolicy test_policy(const fs::path& scratch, std::initializer_list<const char*> disabled = {}) {
  SandboxPolicy p;
  p.scratch = scratch.string();
  p.memory_bytes = uint64_t{256} << 20;
  p.processes = 16;
  p.file_size_bytes = uint64_t{1} << 20;
  p.cpu_seconds_per_request = 2;
  for (const char* d : disabled) p.disabled.emplace(d);
  return p;
}

struct Outcome {
  kagent::ExitInfo exit;
  nlohmann::json result;  // the body's JSON plus "report"; "error" when entering failed
};

// Forks a child in a process group of its own; it enters the sandbox, limits its resources,
// runs `body` and sends back body's JSON with the sandbox report. Anything the child or its
// processes leave behind is killed afterwards.
inline Outcome run_sandboxed(const SandboxPolicy& policy, const std::function<nlohmann::json(Sandbox&)>& body,
                             std::chrono::seconds timeout = std::chrono::seconds(60)) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::cout.flush();
  pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);
    nlohmann::json out;
    try {
      auto sb = Sandbox::enter(policy);
      sb->limit_resources();
      out = body(*sb);
      out["report"] = sb->report();
    } catch (const std::exception& e) {
      out["error"] = e.what();
    }
    std::string text = out.dump();
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  // The monitor (the child) ends like the sandboxed process; give it a moment, then clean up.
  Outcome o;
  int status = 0;
  pid_t r = 0;
  for (int i = 0; i < 500 && (r = ::waitpid(child, &status, WNOHANG)) == 0; ++i) ::usleep(10'000);
  if (r == 0) {
    ::kill(-child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  if (WIFEXITED(status)) {
    o.exit.exited = true;
    o.exit.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    o.exit.signaled = true;
    o.exit.signal = WTERMSIG(status);
  }
  ::kill(-child, SIGKILL);
  o.result = nlohmann::json::parse(text, nullptr, false);
  if (o.result.is_discarded()) o.result = nlohmann::json::object();
  if (o.result.contains("report") && o.result["report"].value("uid_unique", false))
    kagent::sandbox::kill_processes_of_uid(o.result["report"].value("uid", 0u));
  // The child's pids cgroup, as WorkerClient removes a worker's.
  if (o.result.contains("report") && o.result["report"].contains("cgroup"))
    kagent::sandbox::kill_and_remove_pids_cgroup(o.result["report"].value("cgroup", ""));
  return o;
}

inline std::string mechanisms(const nlohmann::json& report) {
  return "network=" + report.value("network", "?") + " filesystem=" + report.value("filesystem", "?") +
         " processes=" + report.value("processes", "?") + " memory=" + report.value("memory", "?") +
         " file_size=" + report.value("file_size", "?") + " uid=" + std::to_string(report.value("uid", -1));
}

inline std::string notes(const nlohmann::json& report) {
  std::string out;
  for (const auto& n : report.value("notes", nlohmann::json::array())) out += "\n    note: " + n.get<std::string>();
  return out;
}

}  // namespace sandbox_test
