#include "worker/protocol/idle_release_setting.h"

#include <charconv>
#include <cstring>

namespace kagent::worker {

std::optional<std::chrono::milliseconds> parse_idle_release(const char* text) {
  if (!text || !*text) return kIdleReleaseDefault;
  long ms = 0;
  const char* end = text + std::strlen(text);
  const auto [p, ec] = std::from_chars(text, end, ms);
  if (ec != std::errc() || p != end || ms < 0) return std::nullopt;
  return std::chrono::milliseconds(ms);
}

}  // namespace kagent::worker
