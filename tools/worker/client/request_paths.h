// The paths a worker is given, made absolute against the caller's working directory. The
// worker runs in its scratch folder (worker_main.cpp), not in its caller's: an answer that
// builds in a folder relative to the working directory (`build_directory="cuda_extensions"`,
// `os.makedirs(...)`) then writes where the sandbox lets it, and a relative path the caller
// passes would name a file in the scratch folder. So every path leaves the client absolute.
#pragma once

#include <string>

#include "worker/protocol/eval_options.h"
#include "worker/protocol/protocol.h"

namespace kagent {

// `path` against the current working directory; empty stays empty (no file), an absolute path
// stays as it is. Lexical: the file need not exist (a missing one is the worker's
// file_not_found, with the name the caller meant).
std::string absolute_path(const std::string& path);

// The candidate's files (its Python file, shared object, prebuilt extensions and bindings).
CandidateRef with_absolute_paths(CandidateRef candidate);
// The baseline cache folder.
EvalOptions with_absolute_paths(EvalOptions options);

}  // namespace kagent
