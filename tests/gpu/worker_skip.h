// For GPU tests that drive kagent-worker: the worker's device, or a printed skip.
#pragma once

#include <iostream>
#include <optional>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "worker/client/worker_client.h"

namespace kagent::testing {

// The device description of `worker` (started here) when it sees a CUDA device; otherwise
// prints "SKIPPED: <suite>: no CUDA device visible to the worker" and returns nullopt.
inline std::optional<DeviceInfo> worker_gpu_or_skip(WorkerClient& worker, const std::string& suite) {
  auto hello = worker.hello();
  REQUIRE_MESSAGE(std::holds_alternative<DeviceInfo>(hello), "worker failed to start");
  const auto device = std::get<DeviceInfo>(hello);
  if (device.available) return device;
  std::cout << "SKIPPED: " << suite << ": no CUDA device visible to the worker\n";
  return std::nullopt;
}

}  // namespace kagent::testing
