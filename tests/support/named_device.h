// A DeviceInfo for tests that only need a GPU's name (the rest stays at its defaults).
#pragma once

#include <string>

#include "result/device_info.h"

namespace kagent::testing {

inline DeviceInfo named_device(const std::string& name) {
  DeviceInfo d;
  d.available = true;
  d.name = name;
  return d;
}

}  // namespace kagent::testing
