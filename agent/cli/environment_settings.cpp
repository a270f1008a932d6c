#include "cli/environment_settings.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "common/paths.h"
#include "common/switch_value.h"
#include "compiler/nvcc_command.h"
#include "evaluation/draw_ahead.h"
#include "sandbox/sandbox_section.h"
#include "worker/protocol/gpu_wait_setting.h"
#include "worker/protocol/idle_release_setting.h"

namespace kagent::cli {

std::optional<std::string> wrong_environment_setting(bool cache_dir_flag_given) {
  if (const char* idle = std::getenv(worker::kIdleReleaseEnv); !worker::parse_idle_release(idle))
    return fmt::format("{}={} is not a whole number of milliseconds (0 turns the idle release off)",
                       worker::kIdleReleaseEnv, idle);
  if (const char* wait = std::getenv(worker::kGpuWaitEnv); !worker::parse_gpu_wait(wait))
    return fmt::format("{}={} is not spin, yield or block (how the workers wait for the GPU outside their timings)",
                       worker::kGpuWaitEnv, wait);
  if (const char* draws = std::getenv(kDrawAheadEnv); !parse_draw_processes(draws))
    return fmt::format("{}={} is not a count of draw processes from 0 to 16 (0: the workers draw the trials' inputs)",
                       kDrawAheadEnv, draws);
  for (const char* name : kEnvironmentSwitches)
    if (const char* v = std::getenv(name); v && *v && !switch_value(v))
      return fmt::format("{}={} is not on or off (on/off, 1/0, true/false, yes/no)", name, v);
  for (const auto& n : kEnvironmentNumbers)
    if (const char* v = std::getenv(n.name); v && *v && !whole_number_value(v, n.min, n.max))
      return fmt::format("{}={} is not a whole number from {} to {}", n.name, v, n.min, n.max);
  if (!cache_dir_flag_given)
    if (auto why = folder_nvcc_cannot_take(cache_root())) return *why;
  try {
    sandbox::required_properties(std::getenv("KAGENT_SANDBOX_REQUIRE"));
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace kagent::cli
