// The sandboxed worker's only writable folder, and the environment that sends every
// cache and temporary file of Python, torch, Triton, nvcc and the CUDA driver into it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kagent::sandbox {

struct ScratchDir {
  std::string root;                                            // absolute, symlinks resolved
  std::vector<std::string> folders;                            // root and the folders made in it
  std::vector<std::pair<std::string, std::string>> environment;  // variables pointing into it
  bool made_here = false;                                      // no folder was requested: a fresh temp one
};

// Uses `requested` (made when missing) or a fresh folder under $TMPDIR (or /tmp), and makes
// its sub-folders. Throws std::system_error when it cannot. Reads HOME, USER and LOGNAME
// of this process to keep user-installed Python packages visible and getpass working.
ScratchDir prepare_scratch(const std::string& requested);

// setenv() for every variable: call before the interpreter starts, which copies the environment.
void export_environment(const ScratchDir& scratch);

// Whether a process of another uid reaches `dir` by its path with no capability: every folder
// on the way searchable by others. The sandbox's uid keeps CAP_DAC_READ_SEARCH, but access(2)
// drops capabilities, and gcc (which Triton runs to build its launcher) tests TMPDIR with it:
// under a private folder it falls back to /tmp, outside the scratch folder.
bool searchable_by_others(const std::string& dir);

// Where a worker's scratch folder goes when none is configured: `tmpdir` ($TMPDIR) when the
// sandbox's uid can reach it so, else the first of /tmp and /var/tmp that it can, else `tmpdir`.
std::string default_scratch_parent(const std::string& tmpdir);

// rm -rf that removes symlinks instead of following them and stays on one filesystem.
void remove_tree(const std::string& root);

}  // namespace kagent::sandbox
