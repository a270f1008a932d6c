// kagent's settings that come from the environment (README, "Configuration") checked as flags are:
// a value that cannot be right is a usage error, said in one line before anything starts, not a
// worker that fails to start later.
#pragma once

#include <optional>
#include <string>

namespace kagent::cli {

// Whether `command` starts workers, the only ones that read these settings (report, curate and
// the rest are left alone by a wrong one).
bool evaluates(const std::string& command);

// The first wrong setting, as one line naming the variable and its value; nullopt when all are fine.
std::optional<std::string> wrong_environment_setting();

}  // namespace kagent::cli
