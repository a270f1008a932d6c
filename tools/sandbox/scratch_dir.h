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

// rm -rf that removes symlinks instead of following them and stays on one filesystem.
void remove_tree(const std::string& root);

}  // namespace kagent::sandbox
