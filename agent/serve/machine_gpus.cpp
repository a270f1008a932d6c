#include "serve/machine_gpus.h"

#include <filesystem>
#include <regex>
#include <system_error>

#include <fmt/format.h>

namespace kagent::serve {

namespace fs = std::filesystem;

int machine_gpu_count() {
  std::error_code ec;
  int n = 0;
  for (auto it = fs::directory_iterator("/proc/driver/nvidia/gpus", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    ++n;
  if (n > 0) return n;
  // Containers may lack /proc/driver/nvidia but have the device files of the GPUs they were given.
  static const std::regex device("nvidia[0-9]+");
  for (auto it = fs::directory_iterator("/dev", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (std::regex_match(it->path().filename().string(), device)) ++n;
  return n;
}

std::optional<std::string> gpu_indices_problem(const std::vector<int>& indices, int count) {
  for (int g : indices) {
    if (g >= 0 && g < count) continue;
    if (count == 0) return fmt::format("{}: this machine has no GPU (kagent serve --compile-only runs without one)", g);
    return fmt::format("{}: this machine has {} GPU{} (index {}{})", g, count, count == 1 ? "" : "s",
                       count == 1 ? "0" : "0 to ", count == 1 ? "" : std::to_string(count - 1));
  }
  return std::nullopt;
}

}  // namespace kagent::serve
