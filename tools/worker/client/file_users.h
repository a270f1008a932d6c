// Which processes have a file open, from /proc/<pid>/fd: how the orchestrator tells the sibling
// workers that take part in the GPU's timing lock (they hold its file open for their whole life,
// worker/protocol/gpu_timing_lock.h) from any other process on the GPU.
#pragma once

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kagent {

// The descriptors (their numbers, as /proc/<pid>/fd names them) through which each of `among`
// has `path` open (the same file: device and inode). A process whose descriptors cannot be read
// (another user's, without the privilege) is not among them.
std::map<pid_t, std::vector<std::string>> descriptors_of_file(const std::vector<pid_t>& among, const std::string& path);
// Those of `among` that have `path` open.
std::set<pid_t> processes_with_file_open(const std::vector<pid_t>& among, const std::string& path);

}  // namespace kagent
