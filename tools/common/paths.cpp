#include "common/paths.h"

#include <cstdlib>
#include <filesystem>

namespace kagent {

std::string cache_root() {
  if (const char* d = std::getenv("KAGENT_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (std::filesystem::path(x) / "kagent").string();
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "kagent").string();
}

}  // namespace kagent
