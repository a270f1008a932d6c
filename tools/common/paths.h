// Where kagent keeps things between runs.
#pragma once

#include <string>

namespace kagent {

// $KAGENT_CACHE_DIR, else $XDG_CACHE_HOME/kagent, else ~/.cache/kagent.
std::string cache_root();

// The Python the worker embeds: $KAGENT_PYTHON where set, else the one kagent was built with. The
// orchestrator writes torch's bytecode with the same one (worker/client/python_bytecode.h).
std::string worker_python();

}  // namespace kagent
