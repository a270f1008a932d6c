#include "common/paths.h"

#include <cstdlib>
#include <filesystem>

#include "build_info.h"

namespace kagent {

std::string cache_root() {
  if (const char* d = std::getenv("KAGENT_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (std::filesystem::path(x) / "kagent").string();
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "kagent").string();
}

std::string worker_python() {
  if (const char* p = std::getenv("KAGENT_PYTHON"); p && *p) return p;
  return build::kPythonExecutable;
}

}  // namespace kagent
