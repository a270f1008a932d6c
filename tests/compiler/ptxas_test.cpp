// ptxas -v parsing on fixed output (CUDA 12 and 13 formats).
#include <doctest/doctest.h>

#include "compiler/ptxas_resources.h"

using namespace kagent;

TEST_CASE("ptxas -v: entries, spills, smem, cmem, device functions skipped") {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for _Z6helperf\n"
      "    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z11relu_kernelPKfPfl' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z11relu_kernelPKfPfl\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 2.882 ms\n"
      "ptxas info    : Compiling entry function '_Z4gemmILi128EEvPKfS1_Pfiii' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z4gemmILi128EEvPKfS1_Pfiii\n"
      "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 16384 bytes smem, 400 bytes cmem[0], 8 bytes cmem[2]\n"
      "ptxas info    : Compiling entry function 'plain_c_kernel' for 'sm_90a'\n"
      "ptxas info    : Function properties for plain_c_kernel\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, 380 bytes cmem[0]\n";
  auto r = parse_ptxas_resources(log);
  REQUIRE(r.size() == 3);
  CHECK(r[0].kernel == "relu_kernel(float const*, float*, long)");
  CHECK(r[0].registers == 10);
  CHECK(r[0].stack_frame_bytes == 0);
  CHECK(r[1].kernel == "void gemm<128>(float const*, float const*, float*, int, int, int)");
  CHECK(r[1].registers == 255);
  CHECK(r[1].shared_static_bytes == 16384);
  CHECK(r[1].stack_frame_bytes == 16);
  CHECK(r[1].spill_store_bytes == 8);
  CHECK(r[1].spill_load_bytes == 12);
  CHECK(r[1].constant_bytes == 408);
  CHECK(r[2].kernel == "plain_c_kernel");
  CHECK(r[2].registers == 32);
  CHECK(r[2].constant_bytes == 380);
  CHECK(parse_ptxas_resources("").empty());
}

TEST_CASE("demangle leaves plain names alone") {
  CHECK(demangle("_Z3fooi") == "foo(int)");
  CHECK(demangle("foo") == "foo");
}
