#include "sandbox/rlimits.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "sandbox/process_table.h"

namespace kagent::sandbox {

namespace {
LimitResult failed(const char* what) { return {false, fmt::format("{}: {}", what, std::strerror(errno))}; }
}  // namespace

LimitResult set_limit(int resource, uint64_t value) {
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) return failed("getrlimit");
  // Never above the hard limit already in force (raising it needs CAP_SYS_RESOURCE).
  rlim_t v = static_cast<rlim_t>(value);
  if (current.rlim_max != RLIM_INFINITY && v > current.rlim_max) v = current.rlim_max;
  rlimit next{v, v};
  if (::setrlimit(resource, &next) != 0) return failed("setrlimit");
  return {true, {}};
}

LimitResult limit_file_size(uint64_t bytes) {
  if (::signal(SIGXFSZ, SIG_IGN) == SIG_ERR) return failed("signal(SIGXFSZ)");
  return set_limit(RLIMIT_FSIZE, bytes);
}

LimitResult limit_processes(int extra, bool own_user_namespace, uint64_t* limit) {
  int tasks = 0;
  if (own_user_namespace) {
    auto self = read_process(::getpid());
    tasks = self ? self->threads : 1;
  } else {
    tasks = count_tasks_of_uid(::getuid());
  }
  const uint64_t value = static_cast<uint64_t>(tasks) + static_cast<uint64_t>(extra);
  if (limit) *limit = value;
  return set_limit(RLIMIT_NPROC, value);
}

LimitResult arm_cpu_time(int seconds) {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return failed("getrusage");
  const double used = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                      static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  rlimit current{};
  if (::getrlimit(RLIMIT_CPU, &current) != 0) return failed("getrlimit");
  rlim_t soft = static_cast<rlim_t>(std::ceil(used)) + static_cast<rlim_t>(seconds);
  if (current.rlim_max != RLIM_INFINITY && soft > current.rlim_max) soft = current.rlim_max;
  rlimit next{soft, current.rlim_max};
  if (::setrlimit(RLIMIT_CPU, &next) != 0) return failed("setrlimit(RLIMIT_CPU)");
  return {true, {}};
}

LimitResult disarm_cpu_time() {
  rlimit current{};
  if (::getrlimit(RLIMIT_CPU, &current) != 0) return failed("getrlimit");
  rlimit next{current.rlim_max, current.rlim_max};
  if (::setrlimit(RLIMIT_CPU, &next) != 0) return failed("setrlimit(RLIMIT_CPU)");
  return {true, {}};
}

}  // namespace kagent::sandbox
