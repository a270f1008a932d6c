// main() of every GPU test executable: without a usable CUDA device the whole suite is
// skipped, saying why (ctest shows it as skipped, not passed); otherwise doctest runs.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cuda_skip.h"

int main(int argc, char** argv) {
  if (const std::string why = kagent::testing::no_device_reason(); !why.empty()) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return kagent::testing::kSkipExitCode;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
