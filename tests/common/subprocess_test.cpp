#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "common/subprocess.h"

using namespace kagent;
using namespace std::chrono_literals;

namespace {
SpawnOptions cmd(std::vector<std::string> argv) {
  SpawnOptions o;
  o.argv = std::move(argv);
  return o;
}
}  // namespace

TEST_CASE("run_command captures output and the exit code") {
  auto r = run_command(cmd({"sh", "-c", "echo out; echo err >&2; exit 3"}), 10s);
  CHECK(r.exit.exited);
  CHECK(r.exit.code == 3);
  CHECK(r.output.find("out") != std::string::npos);
  CHECK(r.output.find("err") != std::string::npos);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("run_command reports a signal") {
  auto r = run_command(cmd({"sh", "-c", "kill -SEGV $$"}), 10s);
  CHECK(r.exit.signaled);
  CHECK(r.exit.signal == SIGSEGV);
  CHECK(r.exit.describe().find("signal 11") == 0);
}

TEST_CASE("run_command kills a command that outlives its timeout, children included") {
  auto start = std::chrono::steady_clock::now();
  auto r = run_command(cmd({"sh", "-c", "sleep 30 & sleep 30"}), 300ms);
  CHECK(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("a program that does not exist is an error, not a hang") {
  CHECK_THROWS_AS(run_command(cmd({"/nonexistent/kagent-program"}), 5s), std::system_error);
}

TEST_CASE("a destroyed Subprocess leaves no process behind") {
  pid_t pid;
  {
    Subprocess p(cmd({"sleep", "30"}));
    pid = p.pid();
    CHECK(p.running());
  }
  CHECK(::kill(pid, 0) != 0);  // reaped and gone
}

TEST_CASE("a large output does not block the child") {
  auto r = run_command(cmd({"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x"}), 20s);
  CHECK(r.exit.code == 0);
  CHECK(r.output.size() == 1000000);
}

namespace {
// A process that is gone, or a zombie nobody reaped yet (both have stopped running).
bool stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

bool stops_within(pid_t pid, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!stopped(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

struct TempFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("kagent_subprocess_test_" + std::to_string(::getpid()));
  ~TempFile() { std::filesystem::remove(path); }
  pid_t read_pid() const {
    for (int i = 0; i < 500; ++i) {
      std::ifstream in(path);
      pid_t pid = 0;
      if (in >> pid && pid > 0) return pid;
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }
};
}  // namespace

TEST_CASE("an address-space limit holds for the command and the processes it starts") {
  // sh starts python: the limit is inherited, so python's 1 GiB allocation fails.
  auto o = cmd({"sh", "-c", "python3 -c 'bytearray(1 << 30)'"});
  o.address_space_limit = 512ull << 20;
  auto r = run_command(o, 60s);
  CHECK(r.exit.exited);
  CHECK(r.exit.code != 0);
  CHECK(r.output.find("MemoryError") != std::string::npos);
  // Without the limit the same allocation succeeds, and the peak resident set shows it.
  auto big = run_command(cmd({"sh", "-c", "python3 -c 'b = bytearray(300 << 20); b[::4096] = b\"x\" * len(b[::4096])'"}), 60s);
  CHECK(big.exit.code == 0);
  CHECK(big.exit.peak_rss_kb > 250 * 1024);
}

TEST_CASE("a command started with a niceness runs at it, and the processes it starts too") {
  // The 19th field of /proc/<pid>/stat is the niceness; sh reads its own and starts a child that
  // reads its own.
  const std::string field = "cut -d' ' -f19 /proc/self/stat";
  auto o = cmd({"sh", "-c", field + "; sh -c \"" + field + "\""});
  const auto base = run_command(o, 60s);
  REQUIRE(base.exit.code == 0);
  const int before = std::stoi(base.output);
  o.nice = 7;
  const auto r = run_command(o, 60s);
  REQUIRE(r.exit.code == 0);
  const int expected = std::min(before + 7, 19);
  CHECK(r.output == std::to_string(expected) + "\n" + std::to_string(expected) + "\n");
}

TEST_CASE("a command started at idle priority runs under SCHED_IDLE, and the processes it starts too") {
  // The 41st field of /proc/<pid>/stat is the scheduling policy: 0 SCHED_OTHER, 5 SCHED_IDLE.
  const std::string field = "cut -d' ' -f41 /proc/self/stat";
  auto o = cmd({"sh", "-c", field + "; sh -c \"" + field + "\""});
  const auto base = run_command(o, 60s);
  REQUIRE(base.exit.code == 0);
  CHECK(base.output == "0\n0\n");
  o.idle_priority = true;
  const auto r = run_command(o, 60s);
  REQUIRE(r.exit.code == 0);
  CHECK(r.output == "5\n5\n");
}

TEST_CASE("a guarded command dies with the thread that started it, its children too") {
  TempFile pid_file;
  auto o = cmd({"sh", "-c", "sleep 30 & echo $! > " + pid_file.path.string() + "; wait"});
  o.die_with_parent = true;
  std::optional<Subprocess> proc;
  pid_t grandchild = -1;
  std::thread([&] {
    proc.emplace(o);
    grandchild = pid_file.read_pid();
  }).join();  // the spawning thread is gone now
  REQUIRE(grandchild > 0);
  auto e = proc->wait(10s);
  REQUIRE(e);
  CHECK(e->signaled);
  CHECK(e->signal == SIGKILL);
  CHECK(stops_within(grandchild, 5s));
}

TEST_CASE("a guarded command keeps its exit code, signal and protocol pipes") {
  auto o = cmd({"sh", "-c", "read line <&3; echo \"got $line\" >&4; exit 7"});
  o.die_with_parent = true;
  o.protocol_pipes = true;
  Subprocess p(o);
  const std::string msg = "hello\n";
  REQUIRE(::write(p.request_fd(), msg.data(), msg.size()) == static_cast<ssize_t>(msg.size()));
  char buf[64] = {};
  ssize_t n = ::read(p.reply_fd(), buf, sizeof buf - 1);
  CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) == "got hello\n");
  auto e = p.wait(10s);
  REQUIRE(e);
  CHECK(e->exited);
  CHECK(e->code == 7);
  auto segv = run_command(cmd({"sh", "-c", "kill -SEGV $$"}), 10s);
  CHECK(segv.exit.signaled);
  CHECK(segv.exit.signal == SIGSEGV);
}
