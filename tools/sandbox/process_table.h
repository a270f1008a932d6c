// Reads /proc: who belongs to a worker (its process group, its descendants, its uid) and
// how much host memory they hold. Used by the orchestrator's memory watchdog and cleanup
// and by the worker to find what a candidate left running.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace kagent::sandbox {

struct ProcessInfo {
  pid_t pid = 0, ppid = 0, pgrp = 0;
  char state = '?';
  int threads = 0;
};

// nullopt when the process is gone (or /proc is not readable).
std::optional<ProcessInfo> read_process(pid_t pid);
std::vector<pid_t> list_processes();
std::optional<uid_t> real_uid_of(pid_t pid);

// Host memory of a process in bytes: its RSS (cheap: statm), or with `proportional` its
// proportional set size (pages shared with other processes split between them, so that
// forked copies of one address space are not counted twice), where the kernel offers
// smaps_rollup (which walks the page tables: milliseconds for a torch process). nullopt
// when the process is gone.
std::optional<uint64_t> memory_of(pid_t pid, bool proportional = false);

// Memory of `root` and every process below it (a worker's monitor: the worker and whatever
// a candidate forked, orphans included, as the monitor adopts them).
uint64_t tree_memory_bytes(pid_t root, bool proportional = false);

// tree_memory_bytes checked against `limit` cheaply: RSS first, and only when that is over
// the limit the proportional sizes, which decide. Returns the amount when over, else nullopt.
std::optional<uint64_t> tree_memory_over(pid_t root, uint64_t limit);

// The children of `pid` (all its threads'), from /proc/<pid>/task/*/children; falls back to
// scanning /proc where the kernel lacks that file.
std::vector<pid_t> children_of(pid_t pid);

// Every process below `root` in the parent tree (not `root` itself, no zombies).
std::vector<pid_t> descendants_of(pid_t root);

// Tasks (processes and their threads) running with real uid `uid`: what RLIMIT_NPROC counts.
int count_tasks_of_uid(uid_t uid);

// SIGKILL to every process whose real uid is `uid`; returns how many were signalled.
// Only meaningful for a uid that nothing else uses (a sandboxed worker's own uid).
int kill_processes_of_uid(uid_t uid);

}  // namespace kagent::sandbox
