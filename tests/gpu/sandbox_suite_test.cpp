// The sandbox suite: candidates whose host code does what the sandbox forbids (a TCP
// connection to a listener this test runs, a file outside the scratch folder, a file in the
// real home, a fork bomb, a host-memory hog), each then returning the right answer. Each must be
// blocked (checked from outside: no connection arrived, no file exists, far fewer processes
// started, memory bounded) and reported in the verdict (its reason), twice in a row (the same
// verdict with warm caches and a worker that ran it before), and the next evaluation, a
// correct kernel, must run normally; all through ONE WorkerClient. Skips, saying why, without a GPU.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include <fmt/format.h>

#include "common/fd.h"
#include "common/files.h"
#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"
#include "result/eval_result.h"
#include "sandbox/process_table.h"
#include "worker/client/worker_client.h"
#include "temp_dir.h"
#include "worker_device.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {


// A TCP listener on 127.0.0.1 in this test's network namespace.
struct Listener {
  Fd fd;
  int port = 0;
  Listener() {
    fd = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd.get(), 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  int connections() const {
    int n = 0;
    for (int c; (c = ::accept(fd.get(), nullptr, nullptr)) >= 0; ++n) ::close(c);
    return n;
  }
};

// A number the candidate wrote to a file in its scratch folder's tmp/; -1 when absent.
long scratch_number(const nlohmann::json& sandbox, const char* name) {
  std::ifstream in(fs::path(sandbox.value("scratch", "")) / "tmp" / name);
  long v = -1;
  in >> v;
  return v;
}

// The homes a candidate would find: this test's user's (the password database's, not HOME)
// and root's.
std::vector<std::string> real_homes() {
  std::vector<std::string> homes = {"/root"};
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) homes.push_back(pw->pw_dir);
  return homes;
}

struct Case {
  std::string name, candidate, format, reason;
  std::function<std::string(const EvalResult&, const nlohmann::json& sandbox)> blocked;  // empty when blocked, else what got through
  bool always_reported = false;  // reported whatever the kernel offers (the orchestrator's watchdog)
};

}  // namespace

TEST_CASE("Sandbox suite: forbidden host code is blocked and reported; the next evaluation runs") {
  const fs::path root = KAGENT_SOURCE_DIR;
  Listener listener;
  const testing::TempDir forbidden_dir("kagent-sandbox-forbidden");
  ::chmod(forbidden_dir.str().c_str(), 0755);
  const fs::path forbidden = forbidden_dir.path() / "forged-baseline.json";

  WorkerOptions wo;
  wo.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  wo.request_timeout = std::chrono::seconds(90);
  wo.env = {fmt::format("KAGENT_SANDBOX_TEST_PORT={}", listener.port),
            fmt::format("KAGENT_SANDBOX_TEST_FORBIDDEN={}", forbidden.string())};
  sandbox::SandboxPolicy policy;  // the defaults, but a memory limit the hog passes quickly
  policy.memory_bytes = uint64_t{16} << 30;
  wo.sandbox = policy;
  WorkerClient worker(wo);
  const DeviceInfo device = testing::require_worker_gpu(worker, "sandbox suite");
  const nlohmann::json first_report = worker.sandbox();
  const auto mechanisms = [](const nlohmann::json& s) {
    return fmt::format("network={} filesystem={} processes={} memory={}+watchdog file_size={} cpu={} reported={}",
                       s.value("network", "?"), s.value("filesystem", "?"), s.value("processes", "?"),
                       s.value("memory", "?"), s.value("file_size", "?"), s.value("cpu_time", "?"),
                       s.value("violations_reported", false));
  };
  std::cout << "sandbox: " << mechanisms(first_report) << "\n";
  for (const auto& n : first_report.value("notes", nlohmann::json::array())) std::cout << "  note: " << n.get<std::string>() << "\n";

  const std::string problem = (root / "tests/gpu/problems/small_gelu.py").string();
  auto spec = worker.load_problem(problem);
  REQUIRE(std::holds_alternative<ProblemSpec>(spec));
  CompileOptions co;
  co.arch = arch_for_compute_capability(device.cc_major, device.cc_minor);
  co.cache_dir = KAGENT_BINARY_DIR "/test-cache/sandbox-suite/compile";
  auto compile = [&](const std::string& rel) {
    co.display_name = fs::path(rel).filename().string();
    CompileInfo ci = compile_native(std::get<ProblemSpec>(spec), read_file(root / rel), co);
    REQUIRE_MESSAGE(ci.ok, rel << ": " << ci.errors);
    return CandidateRef{"cuda", ci.artifact, ci.op_name, "", {}};
  };
  const CandidateRef correct = compile("tests/gpu/kernels/gelu_correct.cu");

  const auto no_connection = [&](const EvalResult&, const nlohmann::json&) {
    int n = listener.connections();
    return n == 0 ? std::string() : fmt::format("{} connections reached the listener", n);
  };
  const std::vector<Case> cases = {
      {"net_connect", "tests/gpu/sandbox/net_connect.cu", "cuda", "sandbox_network", no_connection},
      {"kb_net_connect", "tests/gpu/sandbox/kb_net_connect.py", "kernelbench", "sandbox_network", no_connection},
      {"write_outside", "tests/gpu/sandbox/write_outside.cu", "cuda", "sandbox_filesystem",
       [&](const EvalResult&, const nlohmann::json&) {
         return fs::exists(forbidden) ? "the file was written: " + forbidden.string() : std::string();
       }},
      {"fork_bomb", "tests/gpu/sandbox/fork_bomb.cu", "cuda", "sandbox_processes",
       [&](const EvalResult&, const nlohmann::json& s) {
         long started = scratch_number(s, "fork_bomb_count");
         int left = 0;
         if (s.value("uid_unique", false))  // processes of the worker's own uid: the worker alone, after the request
           for (pid_t p : sandbox::list_processes()) left += sandbox::real_uid_of(p) == s.value("uid", 0u) ? 1 : 0;
         std::cout << fmt::format("  fork_bomb: {} of 500 forks started, {} processes of its uid after the request\n",
                                  started, left);
         if (started >= 500) return fmt::format("{} of 500 forks started", started);
         return left > 1 ? fmt::format("{} processes left running", left - 1) : std::string();
       }},
      {"write_home", "tests/gpu/sandbox/write_home.cu", "cuda", "sandbox_filesystem",
       [&](const EvalResult&, const nlohmann::json&) {
         for (const std::string& home : real_homes())
           for (const char* probe : {"/kagent-sandbox-home-probe", "/kagent-sandbox-home-probe-dir"})
             if (fs::exists(home + probe)) return "written in the real home: " + home + probe;
         return std::string();
       }},
      {"memory_hog", "tests/gpu/sandbox/memory_hog.cu", "cuda", "host_memory_limit",
       [&](const EvalResult& r, const nlohmann::json& s) {
         if (r.reason == "host_memory_limit") return std::string();
         long mib = scratch_number(s, "memory_hog_mib");
         return mib >= 0 && mib < 64 * 1024 ? std::string() : fmt::format("it held {} MiB", mib);
       },
       true},
  };

  // Each case twice in a row through the same client: the second run finds the compile cache
  // warm and (for a native candidate) its library loaded before in the worker; its verdict must
  // be the first's (a first-call fork bomb once passed on a rerun).
  std::vector<Case> runs;
  for (const auto& c : cases)
    for (int k = 0; k < 2; ++k) {
      runs.push_back(c);
      if (k) runs.back().name += " (again)";
    }
  int blocked = 0, next_ok = 0, failed = 0;
  for (const auto& c : runs) {
    const nlohmann::json before = worker.sandbox();  // the worker that runs the candidate
    EvalResult r = c.format == "cuda" ? worker.evaluate(problem, compile(c.candidate))
                                      : worker.evaluate(problem, CandidateRef{"kernelbench", "", "", (root / c.candidate).string(), {}});
    const std::string leak = c.blocked(r, before);
    const bool reported = r.reason == c.reason;
    const bool must_report = c.always_reported || before.value("violations_reported", false);
    EvalResult next = worker.evaluate(problem, correct);
    const bool ok = leak.empty() && (reported || !must_report) && next.status == Status::Correct;
    blocked += leak.empty();
    next_ok += next.status == Status::Correct;
    failed += !ok;
    std::cout << fmt::format("{:<4} {:<23} {:<14} {:<19} {} | next: {}\n", ok ? "ok" : "FAIL", c.name,
                             to_string(r.status), r.reason,
                             leak.empty() ? (reported ? "blocked, reported" : "blocked, not reported") : "NOT BLOCKED: " + leak,
                             to_string(next.status));
    CHECK_MESSAGE(leak.empty(), c.name << ": " << leak);
    CHECK_MESSAGE((reported || !must_report), c.name << ": expected reason " << c.reason << ", got "
                                                     << to_string(r.status) << " " << r.reason << ": " << r.message);
    CHECK_MESSAGE(next.status == Status::Correct, c.name << ": the next evaluation: " << to_string(next.status) << " "
                                                         << next.message << "\n" << next.runtime_error);
  }
  std::cout << fmt::format("Sandbox suite: {} blocked, next evaluation ok {}/{}, {} failed on {} ({})\n", blocked,
                           next_ok, runs.size(), failed, device.name, mechanisms(first_report));
}
