// The cores left to the compilers, and a command kept on the cores it is given.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/cpu_affinity.h"
#include "common/subprocess.h"

using namespace kagent;
using namespace std::chrono_literals;

namespace {
// Sets an environment variable for a scope.
// Sets (or, with nullptr, unsets) a variable for a scope, and puts back what was there.
struct EnvVar {
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvVar() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  const char* name_;
  std::optional<std::string> old_;
};

// "0-5,8" for a list of cores, as /proc's Cpus_allowed_list writes them.
std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}
}  // namespace

TEST_CASE("the compilers get the allowed cores less the reserved ones, or any where too few are left") {
  const std::vector<int> sixteen = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  CHECK(compiler_cpus(sixteen, 4) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(compiler_cpus({4, 5, 6, 7}, 2) == std::vector<int>{4, 5});  // a taskset's cores
  CHECK(compiler_cpus({4, 5, 6, 7}, 3).empty());                     // one left: anywhere
  CHECK(compiler_cpus(sixteen, 0).empty());                          // none reserved: anywhere
  CHECK(compiler_cpus({}, 2).empty());                               // affinity unknown
}

TEST_CASE("one reserved core per worker and one more for two workers or more, unless KAGENT_RESERVED_CPUS says otherwise") {
  CHECK(reserved_cpus(4) == 2);
  CHECK(reserved_cpus(3) == 2);
  CHECK(reserved_cpus(2) == 1);
  CHECK(reserved_cpus(1) == 0);
  CHECK(reserved_cpus(0) == 0);
  {
    EnvVar v("KAGENT_RESERVED_CPUS", "0");
    CHECK(reserved_cpus(3) == 0);
  }
  {
    EnvVar v("KAGENT_RESERVED_CPUS", "6");
    CHECK(reserved_cpus(3) == 6);
  }
  for (const char* bad : {"-1", "two", "3x"}) {
    EnvVar v("KAGENT_RESERVED_CPUS", bad);
    std::string warning;
    CHECK(reserved_cpus(3, &warning) == 2);
    CHECK(warning == std::string("KAGENT_RESERVED_CPUS must be a whole number >= 0, not '") + bad +
                         "': using 2 (one per two workers, for two workers or more)");
  }
}

TEST_CASE("a command started on given cores runs there, and the processes it starts too") {
  const std::vector<int> allowed = allowed_cpus();
  REQUIRE_FALSE(allowed.empty());
  const std::string field = "grep Cpus_allowed_list /proc/self/status | cut -f2";
  SpawnOptions o;
  o.argv = {"sh", "-c", field + "; sh -c \"" + field + "\""};
  o.cpus = {allowed.back()};
  const auto r = run_command(o, 60s);
  REQUIRE(r.exit.code == 0);
  const std::string one = std::to_string(allowed.back());
  CHECK(r.output == one + "\n" + one + "\n");
  // Without cores given, it runs wherever this process may.
  o.cpus.clear();
  const auto any = run_command(o, 60s);
  CHECK(any.output.substr(0, any.output.find('\n')) == cpu_list_text(allowed));
}

TEST_CASE("workers' CPU thread pools: a share of the cores each, asleep between parallel regions, unless the user said") {
  EnvVar n("OMP_NUM_THREADS", nullptr), w("OMP_WAIT_POLICY", nullptr);
  CHECK(worker_thread_env(16, 3) == std::vector<std::string>{"OMP_NUM_THREADS=5", "OMP_WAIT_POLICY=PASSIVE"});
  CHECK(worker_thread_env(16, 1) == std::vector<std::string>{"OMP_NUM_THREADS=16", "OMP_WAIT_POLICY=PASSIVE"});
  CHECK(worker_thread_env(2, 4) == std::vector<std::string>{"OMP_NUM_THREADS=1", "OMP_WAIT_POLICY=PASSIVE"});
  {
    EnvVar mine("OMP_NUM_THREADS", "2");
    CHECK(worker_thread_env(16, 3).empty());
  }
  {
    EnvVar mine("OMP_WAIT_POLICY", "ACTIVE");
    CHECK(worker_thread_env(16, 3).empty());
  }
}
