#include "common/cpu_affinity.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>

namespace kagent {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

unsigned usable_cpu_count() {
  const size_t n = allowed_cpus().size();
  return n ? static_cast<unsigned>(n) : std::max(1u, std::thread::hardware_concurrency());
}

std::vector<int> compiler_cpus(const std::vector<int>& allowed, int reserved) {
  if (reserved <= 0) return {};
  const auto left = static_cast<long>(allowed.size()) - reserved;
  if (left < kMinCompilerCpus) return {};
  return {allowed.begin(), allowed.begin() + left};
}

int reserved_cpus(int workers, std::string* warning) {
  const int fallback = workers >= 2 ? (workers + 1) / 2 : 0;
  const char* v = std::getenv("KAGENT_RESERVED_CPUS");
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (errno || *end || n < 0 || n > CPU_SETSIZE) {
    if (warning)
      *warning = std::string("KAGENT_RESERVED_CPUS must be a whole number >= 0, not '") + v + "': using " +
                 std::to_string(fallback) + " (one per two workers, for two workers or more)";
    return fallback;
  }
  return static_cast<int>(n);
}

std::vector<std::string> worker_thread_env(int cpus, int workers) {
  for (const char* name : {"OMP_NUM_THREADS", "OMP_WAIT_POLICY"})
    if (const char* v = std::getenv(name); v && *v) return {};
  const int threads = std::max(1, cpus / std::max(1, workers));
  return {"OMP_NUM_THREADS=" + std::to_string(threads), "OMP_WAIT_POLICY=PASSIVE"};
}

}  // namespace kagent
