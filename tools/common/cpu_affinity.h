// The CPU cores kagent's compilers may use: the ones this process may use, less a few kept free
// for the workers that time on the GPU. A timed launch that waits for its core is the
// candidate's time: measured on the 149 real answers with 8 compiles at once (two translation
// units each, at nice 19) on 16 cores beside three workers, 119 of 142 timing loops lost their
// thread's core at least once, and 72 of the 84 loops with over 5% noise were among them.
// The workers are not pinned: several kagent processes on one machine would pin theirs to the
// same cores; kept free of compilers, those cores are where the scheduler finds them room.
#pragma once

#include <string>
#include <vector>

namespace kagent {

// Fewer than this left to the compilers: no cores are kept free (they may run anywhere).
inline constexpr int kMinCompilerCpus = 2;

// The cores this process may run on (sched_getaffinity: a taskset, a cgroup's cpuset),
// ascending; empty where unknown.
std::vector<int> allowed_cpus();

// `allowed` less its last `reserved` cores, when at least kMinCompilerCpus remain; else empty,
// which means: anywhere. `reserved` <= 0 keeps none free (empty).
std::vector<int> compiler_cpus(const std::vector<int>& allowed, int reserved);

// The cores to keep free of compilers for `workers` workers: $KAGENT_RESERVED_CPUS where set (a
// whole number >= 0; 0 keeps none), else one per worker and one more (the workers' other
// threads, the orchestrator's). A malformed value is reported in `warning` and the default used.
int reserved_cpus(int workers, std::string* warning = nullptr);

// "0-5,8" for a list of cores (as /proc's Cpus_allowed_list writes them); "any" when empty.
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace kagent
