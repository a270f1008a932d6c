// Which waiting request a free worker serves: the pool's scheduling rule, apart from its locks
// and processes so that it can be tested on its own.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace kagent {

struct WorkerChoice {
  size_t request = 0;  // position in the queue
  size_t worker = 0;   // position in the free workers
};

// What a worker holds of the problem at `path`, as choose_worker matches it: its text's hash, so
// that the same problem under another file name counts (KernelBench's leaderboard has 149 answers
// over 99 problem texts, each under its answer's name; a worker keeps the trials' CPU draws of a
// text once, kagent_worker/problem.py). The path itself where the file cannot be read; empty for
// none.
std::string problem_affinity_key(const std::string& path);

// `free_workers`: what each free worker holds (problems it was asked about), the one free
// longest first. `waiting`: each waiting request's problem (empty: none in particular), oldest
// first; both non-empty. The oldest request a free worker already holds the problem of goes
// first, on the first such worker (loading it again elsewhere costs seconds); without one, or
// when the oldest request is `front_overdue` (passed over too often), the oldest request takes
// the worker free longest.
WorkerChoice choose_worker(const std::vector<const std::set<std::string>*>& free_workers,
                           const std::vector<const std::string*>& waiting, bool front_overdue);

}  // namespace kagent
