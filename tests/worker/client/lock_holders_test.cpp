// Who holds a lock file, from the kernel's lists (worker/client/lock_holders.h), with real
// flocks and processes.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "temp_dir.h"
#include "common/fd.h"
#include "worker/client/lock_holders.h"

using namespace kagent;

TEST_CASE("/proc/locks lines: held and blocked locks on one inode, others left out") {
  const std::string text =
      "1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF\n"
      "1: -> FLOCK  ADVISORY  READ 4343 fe:00:1234 0 EOF\n"
      "2: POSIX  ADVISORY  READ 99 08:01:777 0 EOF\n"
      "lock:\t3: FLOCK  ADVISORY  READ 4444 00:2f:1234 0 EOF\n";
  const auto e = parse_file_locks(text, 1234);
  REQUIRE(e.size() == 3);
  CHECK(e[0].pid == 4242);
  CHECK(e[0].exclusive);
  CHECK_FALSE(e[0].waiting);
  CHECK(e[1].pid == 4343);
  CHECK(e[1].waiting);
  CHECK_FALSE(e[1].exclusive);
  CHECK(e[2].pid == 4444);  // an fdinfo line, another device number (overlayfs): the inode decides
  CHECK(parse_file_locks(text, 12345).empty());
}

TEST_CASE("a lock whose taker exited is kept by what it forked, which is found") {
  testing::TempDir dir("kagent-lock-holders");
  const std::string path = dir.write("GPU-x.timing", "");
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t taker = ::fork();
  REQUIRE(taker >= 0);
  if (taker == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::flock(fd, LOCK_SH) != 0) ::_exit(1);
    const pid_t keeper = ::fork();
    if (keeper == 0) {
      ::alarm(30);
      for (;;) ::pause();
    }
    if (::write(pipe_fds[1], &keeper, sizeof keeper) != sizeof keeper) ::_exit(2);
    ::_exit(0);  // the taker goes; its child keeps the open file description, and the lock
  }
  pid_t keeper = 0;
  REQUIRE(::read(pipe_fds[0], &keeper, sizeof keeper) == sizeof keeper);
  ::waitpid(taker, nullptr, 0);
  const auto locks = file_locks(path);
  REQUIRE(locks.size() == 1);
  CHECK(locks[0].pid == taker);  // the kernel still names the exited taker
  Fd probe(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  CHECK(::flock(probe.get(), LOCK_EX | LOCK_NB) != 0);  // held all the same
  const auto keepers = orphan_lock_keepers(path);
  REQUIRE(keepers.size() == 1);
  CHECK(keepers.begin()->first == keeper);
  CHECK(keepers.begin()->second == taker);
  ::kill(keeper, SIGKILL);
  for (int i = 0; i < 200 && ::flock(probe.get(), LOCK_EX | LOCK_NB) != 0; ++i) ::usleep(10'000);
  CHECK(::flock(probe.get(), LOCK_EX | LOCK_NB) == 0);  // gone with the last descriptor
  CHECK(orphan_lock_keepers(path).empty());
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_CASE("a holder that is alive is no orphan, and is named") {
  testing::TempDir dir("kagent-lock-holders");
  const std::string path = dir.write("GPU-y.timing", "");
  Fd mine(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(::flock(mine.get(), LOCK_SH) == 0);
  CHECK(orphan_lock_keepers(path).empty());
  const auto locks = file_locks(path);
  REQUIRE(locks.size() == 1);
  CHECK(locks[0].pid == ::getpid());
  CHECK(describe_lock_holder(::getpid()).find("pid " + std::to_string(::getpid()) + " (") == 0);
}
