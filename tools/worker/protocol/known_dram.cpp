#include "worker/protocol/known_dram.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace kagent {

std::string known_dram_env(const std::string& uuid, double gbps) {
  return fmt::format("{}={}={}", kKnownDramEnv, uuid, gbps);
}

std::optional<double> known_dram_gbps(const char* value, const std::string& uuid) {
  if (!value || uuid.empty()) return std::nullopt;
  const std::string v = value;
  const auto eq = v.rfind('=');
  if (eq == std::string::npos || v.compare(0, eq, uuid) != 0 || eq != uuid.size()) return std::nullopt;
  const std::string number = v.substr(eq + 1);
  char* end = nullptr;
  const double gbps = std::strtod(number.c_str(), &end);
  if (number.empty() || *end || !std::isfinite(gbps) || gbps <= 0) return std::nullopt;
  return gbps;
}

}  // namespace kagent
