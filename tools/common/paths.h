// Where kagent keeps things between runs.
#pragma once

#include <string>

namespace kagent {

// $KAGENT_CACHE_DIR, else $XDG_CACHE_HOME/kagent, else ~/.cache/kagent.
std::string cache_root();

}  // namespace kagent
