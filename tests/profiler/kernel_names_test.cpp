// Kernel names: demangling, qualified names, short table names.
#include <doctest/doctest.h>

#include "profiler/kernel_names.h"

using namespace kagent::profiler;

TEST_CASE("demangle: Itanium names demangle, C names stay") {
  CHECK(demangle("_Z6squarePfi") == "square(float*, int)");
  CHECK(demangle("_ZN12_GLOBAL__N_16kernelILb0EEEvPKfi") == "void (anonymous namespace)::kernel<false>(float const*, int)");
  CHECK(demangle("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT") == "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT");
}

TEST_CASE("qualified_name drops return type and parameters, keeps scopes and templates") {
  CHECK(qualified_name("void (anonymous namespace)::k<false>(float const*, int)") == "(anonymous namespace)::k<false>");
  CHECK(qualified_name("(anonymous namespace)::gelu(float4 const*, float4*, long)") == "(anonymous namespace)::gelu");
  CHECK(qualified_name("kagent_probe::saxpy(float, float const*, float*, long)") == "kagent_probe::saxpy");
  CHECK(qualified_name("void foo<void (*)(int), 4>(int)") == "foo<void (*)(int), 4>");
  CHECK(qualified_name("void at::native::(anonymous namespace)::k<4, unsigned int>(int)") ==
        "at::native::(anonymous namespace)::k<4, unsigned int>");
  CHECK(qualified_name("nvjet_tst_128x256") == "nvjet_tst_128x256");
  CHECK(qualified_name("(anonymous namespace)") == "(anonymous namespace)");
}

TEST_CASE("short_kernel_name fits the limit, collapsing templates before dropping scopes") {
  const std::string aten =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
      "(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
  CHECK(short_kernel_name(aten, 200) ==
        "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >");
  CHECK(short_kernel_name(aten, 48) == "at::native::vectorized_elementwise_kernel<...>");
  CHECK(short_kernel_name(aten, 40) == "...::vectorized_elementwise_kernel<...>");
  const std::string cut = short_kernel_name(aten, 20);
  CHECK(cut.size() <= 20);
  CHECK(cut.substr(cut.size() - 3) == "...");
  CHECK(short_kernel_name("void (anonymous namespace)::linear_bias_relu_kernel<false>(float const*, int)", 48) ==
        "linear_bias_relu_kernel<false>");
}
