// KAGENT_GPU_WAIT's values: how a worker waits for the GPU outside its timings.
#include "worker/protocol/gpu_wait_setting.h"

#include <doctest/doctest.h>

#include <string>

using kagent::worker::GpuWait;
using kagent::worker::gpu_wait_name;
using kagent::worker::parse_gpu_wait;

TEST_CASE("KAGENT_GPU_WAIT: unset or empty is CUDA's spin; three words; anything else refused") {
  CHECK(parse_gpu_wait(nullptr) == GpuWait::Spin);
  CHECK(parse_gpu_wait("") == GpuWait::Spin);
  CHECK(parse_gpu_wait("spin") == GpuWait::Spin);
  CHECK(parse_gpu_wait("yield") == GpuWait::Yield);
  CHECK(parse_gpu_wait("block") == GpuWait::Block);
  for (const char* wrong : {"Yield", "blocking", "1", " spin", "spin "}) CHECK_FALSE(parse_gpu_wait(wrong));
  for (GpuWait w : {GpuWait::Spin, GpuWait::Yield, GpuWait::Block})
    CHECK(parse_gpu_wait(std::string(gpu_wait_name(w)).c_str()) == w);
}
