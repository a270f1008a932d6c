// kagent's settings that come from the environment (README, "Configuration") checked as flags are:
// a value that cannot be right is a usage error, said in one line before anything starts, not a
// worker that fails to start later. Checked for the commands that take the evaluation flags
// (cli/eval_flags.h): report, curate and the rest are left alone by a wrong one.
#pragma once

#include <optional>
#include <string>

namespace kagent::cli {

// The first wrong setting, as one line naming the variable and its value; nullopt when all are fine.
// The cache folder the environment gives (KAGENT_CACHE_DIR, XDG_CACHE_HOME, HOME) is checked only
// where no --cache-dir stands in for it.
std::optional<std::string> wrong_environment_setting(bool cache_dir_flag_given);

}  // namespace kagent::cli
