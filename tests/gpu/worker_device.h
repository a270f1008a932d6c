// For GPU tests that drive kagent-worker: the worker's device. main() has already skipped the
// suite where the driver sees no device (gpu_test_main.cpp), so a worker that sees none here
// is a failure (its sandbox or its CUDA setup), not a reason to skip.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "worker/client/worker_client.h"

namespace kagent::testing {

// Starts `worker` and returns its device; fails the test when it cannot start or sees no device.
inline DeviceInfo require_worker_gpu(WorkerClient& worker, const std::string& suite) {
  auto hello = worker.hello();
  if (const auto* err = std::get_if<WorkerError>(&hello)) FAIL(suite << ": the worker did not start: " << err->message);
  const auto device = std::get<DeviceInfo>(hello);
  REQUIRE_MESSAGE(device.available, suite << ": the driver sees a CUDA device but the worker does not (its sandbox "
                                             "report: "
                                          << worker.sandbox().dump() << ")");
  return device;
}

}  // namespace kagent::testing
