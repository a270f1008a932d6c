// involuntary_switches_of_this_thread: the kernel's count for the calling thread, which grows when
// another runnable thread shares its only core (what a sibling's CPU work does to a timing).
#include <doctest/doctest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "timer/thread_switches.h"

using namespace kagent;

namespace {

void spin_for(std::chrono::milliseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  volatile unsigned long x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

bool pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;  // 0: the calling thread
}

}  // namespace

TEST_CASE("a thread that shares its only core with a busy one is preempted, and the count says so") {
  const auto before = involuntary_switches_of_this_thread();
  REQUIRE(before);  // Linux with /proc: always here
  cpu_set_t old;
  REQUIRE(sched_getaffinity(0, sizeof old, &old) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &old)) ++cpu;
  REQUIRE(cpu < CPU_SETSIZE);
  REQUIRE(pin_to_cpu(cpu));
  std::atomic<bool> stop{false};
  std::thread rival([&] {
    pin_to_cpu(cpu);
    while (!stop) spin_for(std::chrono::milliseconds(1));
  });
  const auto start = involuntary_switches_of_this_thread();
  spin_for(std::chrono::milliseconds(300));  // several scheduler slices, each shared with the rival
  const auto after = involuntary_switches_of_this_thread();
  stop = true;
  rival.join();
  sched_setaffinity(0, sizeof old, &old);
  REQUIRE(start);
  REQUIRE(after);
  CHECK(*start >= *before);
  CHECK(*after > *start);
}
