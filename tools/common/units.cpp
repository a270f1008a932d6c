#include "common/units.h"

#include <cmath>

#include <fmt/format.h>

namespace kagent {

std::string format_bytes(double b) {
  constexpr double kKi = 1024.0, kMi = kKi * 1024, kGi = kMi * 1024;
  if (b >= kGi) return fmt::format("{:.1f} GiB", b / kGi);
  if (b >= kMi) return fmt::format("{:g} MiB", std::round(b / kMi * 10) / 10);
  if (b >= kKi) return fmt::format("{:g} KiB", std::round(b / kKi * 10) / 10);
  return fmt::format("{:g} B", b);
}

}  // namespace kagent
