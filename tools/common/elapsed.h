// Wall seconds since a steady-clock point: the phases, waits and start-up steps kagent records.
#pragma once

#include <chrono>

namespace kagent {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kagent
