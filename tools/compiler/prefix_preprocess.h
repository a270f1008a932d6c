// The preprocessor's work on load_inline's implicit headers, done once per machine.
//
// nvcc preprocesses an answer's cuda.cu twice (host and device) before its front ends, and each
// run expands the same three implicit lines (torch/types.h, cuda.h, cuda_runtime.h: 215,000
// lines, 0.45-1 s) before the answer's own code. Here the prefix is preprocessed once per
// preprocessor command (its output, the macros it leaves defined and which of its files are
// #pragma once), kept in the compile cache, and an answer's run preprocesses only what follows
// the three lines:
// - the macros come back through -include'd files, each macro from a file of the same system
//   header kind as the one that defined it (GCC marks the tokens of a system header's macro);
//   __COUNTER__ is advanced to where the prefix left it;
// - a #pragma once file of the prefix resolves to an empty file in a folder searched first (GCC
//   would not enter it again); an include-guarded one is entered and expands to nothing, and
//   that empty section is dropped, as GCC drops it;
// - the output is the prefix's own output followed by the rest's.
// Tokens, their lines, files and system-header marks are those of the whole run
// (bench/compile/check_prefix_preprocess.py compares every real answer's both runs). Anything
// the scheme cannot vouch for runs the whole command instead: a prefix that defines macros by
// the extension's name or uses push_macro/poison, a run that prints anything, a prefix file
// entered again by another path, a file GCC would take for one of the prefix's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"

namespace kagent {

struct PrefixPreprocessRequest {
  const CompileCache* cache = nullptr;
  std::string command;                   // nvcc's preprocessor line for the file (a shell line)
  std::vector<std::string> environment;  // nvcc's variables
  std::string source_name = "cuda.cu";   // as the command names it, relative to the working folder
  std::string source_text;               // the file; must start with kCudaImplicitHeaders
  std::string toolchain;                 // what else the prefix depends on (nvcc's identity, torch)
  SpawnOptions spawn;                    // the compile's own (working folder, environment, limits' CPUs)
  CompileLimits limits;                  // the answer's
  CompileLimits prefix_limits;           // the prefix's build (once per machine)
  std::vector<CompileStep>* steps = nullptr;
};

// The preprocessor's run done from the prefix: its output file written as the command would
// have, the result as the command's (empty output, exit 0). nullopt when this command is not
// one the scheme serves or it could not vouch for the result: the caller runs the command.
std::optional<RunResult> preprocess_after_prefix(const PrefixPreprocessRequest& request);

// Builds the prefix for `command` (a preprocessor line of the CUDA part) if missing; false when
// it cannot be built for it. prepare_inline_headers uses it before a collection's first answers.
bool ensure_preprocess_prefix(const PrefixPreprocessRequest& request);

}  // namespace kagent
