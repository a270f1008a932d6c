// The GPU suites' skip decision (cuda_skip.h) on any machine: gpu_skip_probe (gpu_test_main.cpp
// with no test case) is run against a stand-in driver (fake_libcuda.c) that reports an old CUDA
// version, no device or one device, and must skip with the right reason, or run.
#include <doctest/doctest.h>
#include <dlfcn.h>

#include <string>

#include "kagent_process.h"
#include "temp_dir.h"

using namespace kagent::testing;

namespace {

struct Probe {
  int status;
  std::string out;
};

// Runs the probe with the stand-in driver first on the library path (none: the machine's own).
Probe run_probe(const std::vector<std::string>& env, bool fake_driver) {
  const TempDir dir("kagent-gpu-skip");
  std::string cmd;
  for (const auto& v : env) cmd += v + " ";
  if (fake_driver) cmd += std::string("LD_LIBRARY_PATH=") + KAGENT_FAKE_LIBCUDA_DIR + " ";
  cmd += std::string(KAGENT_GPU_SKIP_PROBE) + " > " + dir.str() + "/out.txt 2>&1";
  const int ws = std::system(cmd.c_str());
  return {WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, kagent::read_file(dir.str() + "/out.txt")};
}

}  // namespace

TEST_CASE("a driver older than the CUDA runtime: skipped as 'driver too old', not as 'no driver'") {
  const Probe p = run_probe({"KAGENT_FAKE_DRIVER_VERSION=12040", "KAGENT_FAKE_DEVICES=1"}, true);
  INFO(p.out);
  CHECK(p.status == 77);
  CHECK(has(p.out, "SKIPPED: NVIDIA driver too old for this CUDA runtime: the driver supports CUDA 12.4, kagent is "
                   "built with CUDA 13."));
}

TEST_CASE("a driver that finds no device: skipped as 'no NVIDIA driver or device'") {
  const Probe p = run_probe({"KAGENT_FAKE_DRIVER_VERSION=13000", "KAGENT_FAKE_DEVICES=0", "CUDA_VISIBLE_DEVICES=7"}, true);
  INFO(p.out);
  CHECK(p.status == 77);
  CHECK(has(p.out, "SKIPPED: no NVIDIA driver or device: the driver finds no CUDA device (CUDA_VISIBLE_DEVICES=7)"));
}

TEST_CASE("a driver with a device: the suite runs") {
  const Probe p = run_probe({"KAGENT_FAKE_DRIVER_VERSION=13000", "KAGENT_FAKE_DEVICES=1"}, true);
  INFO(p.out);
  CHECK(p.status == 0);
  CHECK_FALSE(has(p.out, "SKIPPED"));
}

TEST_CASE("no driver at all (only where this machine has none)") {
  if (void* real = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(real);
    MESSAGE("this machine has an NVIDIA driver: the no-driver case is shown on machines without one");
    return;
  }
  const Probe p = run_probe({}, false);
  INFO(p.out);
  CHECK(p.status == 77);
  CHECK(has(p.out, "SKIPPED: no NVIDIA driver or device: libcuda.so.1 (the NVIDIA driver) is not installed"));
}
