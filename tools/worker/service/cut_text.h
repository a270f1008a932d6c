// Long texts (tracebacks, compiler output, profiler errors) cut for a reply, saying how much went.
#pragma once

#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace kagent::worker {

inline std::string cut_text(const std::string& s, size_t limit = 4000) {
  if (s.size() <= limit) return s;
  return s.substr(0, limit) + fmt::format("\n[... cut {} bytes]", s.size() - limit);
}

}  // namespace kagent::worker
