#include <doctest/doctest.h>

#include <csignal>

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
