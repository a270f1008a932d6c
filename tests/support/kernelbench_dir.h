// Where the tests find KernelBench's problems: the folder the build names
// (KAGENT_KERNELBENCH_DIR, see tests/CMakeLists.txt), or a carried copy named by the
// environment variable of that name (GPU machines, which lack the build's folder).
#pragma once

#include <cstdlib>
#include <string>

namespace kagent::testing {

inline std::string kernelbench_dir() {
  const char* env = std::getenv("KAGENT_KERNELBENCH_DIR");
  return env && *env ? env : KAGENT_KERNELBENCH_DIR;
}

// A manifest's problem path: "kernelbench/level1/..." is one of KernelBench's, anything else is
// relative to the source tree.
inline std::string manifest_problem(const std::string& path) {
  const std::string prefix = "kernelbench/";
  if (path.rfind(prefix, 0) == 0) return kernelbench_dir() + "/" + path.substr(prefix.size());
  return std::string(KAGENT_SOURCE_DIR) + "/" + path;
}

}  // namespace kagent::testing
