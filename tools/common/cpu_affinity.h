// The CPU cores kagent's compilers may use: the ones this process may use, less a few kept free
// for the workers that time on the GPU. A timed launch that waits for its core is the
// candidate's time. Measured on the 149 real answers (H200, 16 cores, three workers, 8 compiles
// at once at nice 19; bench/realworld/RESULTS.md), on one machine: with 4 cores kept free, 96
// of 142 timing loops lost their thread's core at least once (129 without), the sample noise
// median was 11.6% (14.6%), 14 loops ran to the time cap (24), and collect made 45.7 answers a
// minute (43.4). The preemptions did not go away: most come from elsewhere (not found yet).
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

// How many of them: what "one per core" means for kagent's defaults. Under a taskset, a Slurm
// job's cpuset or a container's, hardware_concurrency() counts the whole machine's cores, and
// a default sized by it runs two or more compilers per core that is really there.
unsigned usable_cpu_count();

// `allowed` less its last `reserved` cores, when at least kMinCompilerCpus remain; else empty,
// which means: anywhere. `reserved` <= 0 keeps none free (empty).
std::vector<int> compiler_cpus(const std::vector<int>& allowed, int reserved);

// The cores to keep free of compilers for `workers` workers: $KAGENT_RESERVED_CPUS where set (a
// whole number >= 0; 0 keeps none), else, where two or more workers time beside the compiles
// (collect, serve), one per two workers, rounded up; none for one worker (eval, solve: its
// compiles mostly run while it does not time). A malformed value is reported in `warning` and
// the default used. Why so few: the compilers run at nice 19 under SCHED_IDLE, so a worker that
// wakes takes a core from them at once, and four workers used 1.5 cores over a collection of the
// 149 real answers. Keeping 2 cores free instead of 5 (one per worker and one more, before the
// thirteenth session), with 12 compiles at once instead of 8, took that collection from 57.2 to
// 66.0 answers a minute on one H200 machine, one run after the other, with the same verdicts,
// no untrusted timing and a sample noise median of 5.7% against 5.4% (bench/realworld/RESULTS.md).
int reserved_cpus(int workers, std::string* warning = nullptr);

// The environment a worker's CPU thread pools start with, when `workers` workers share
// `cpus` cores: torch's intra-op pool (OpenMP) sized to the worker's share of the cores, and
// its threads asleep, not spinning, between parallel regions. Unset, each of three workers
// starts one thread per core, and after every CPU operation (a problem's draws, a reference
// built on the CPU) they spin on cores where a sibling times a launch. Empty where the user set
// OMP_NUM_THREADS or OMP_WAIT_POLICY: theirs stand.
std::vector<std::string> worker_thread_env(int cpus, int workers);

}  // namespace kagent
