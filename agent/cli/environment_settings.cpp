#include "cli/environment_settings.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "sandbox/sandbox_section.h"
#include "worker/protocol/idle_release_setting.h"

namespace kagent::cli {

std::optional<std::string> wrong_environment_setting() {
  if (const char* idle = std::getenv(worker::kIdleReleaseEnv); !worker::parse_idle_release(idle))
    return fmt::format("{}={} is not a whole number of milliseconds (0 turns the idle release off)",
                       worker::kIdleReleaseEnv, idle);
  try {
    sandbox::required_properties(std::getenv("KAGENT_SANDBOX_REQUIRE"));
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace kagent::cli
