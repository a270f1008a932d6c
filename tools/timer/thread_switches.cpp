#include "timer/thread_switches.h"

#include <exception>
#include <fstream>
#include <string>
#include <string_view>

namespace kagent {

std::optional<int64_t> involuntary_switches_of_this_thread() {
  std::ifstream in("/proc/thread-self/status");
  static constexpr std::string_view kKey = "nonvoluntary_ctxt_switches:";
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, kKey.size(), kKey) != 0) continue;
    try {
      return std::stoll(line.substr(kKey.size()));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace kagent
