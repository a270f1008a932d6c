// Own vs library kernels: the library patterns, matching ptxas names, GPU-time shares.
#include <doctest/doctest.h>

#include "profiler/kernel_attribution.h"
#include "profiler_test_util.h"

using namespace kagent::profiler;
using kagent::profiler::test::record;

TEST_CASE("library_of knows ATen, cuBLAS (incl. Hopper nvjet), cuDNN, CUTLASS, Triton, CUB") {
  CHECK(library_of("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                   "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)") == "aten");
  CHECK(library_of("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                   "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)") == "aten");
  CHECK(library_of("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT") == "cublas");
  // fp32 scaled_dot_product_attention (KernelBench level1/97) runs the memory-efficient kernel.
  CHECK(library_of("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                   "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)") == "mem_efficient_attention");
  CHECK(library_of("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_"
                   "kernel__5x_cublas") == "cublas");
  CHECK(library_of("ampere_sgemm_128x64_nn") == "cublas");
  CHECK(library_of("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
                   "cublasGemvParamsEx<int, float const*, float const*, float*> >(cublasGemvParamsEx<int, float const*, "
                   "float const*, float*>, float, float)") == "cublas");
  CHECK(library_of("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(cutlass_80_simt_sgemm_128x64_8x5_"
                   "nn_align1::Params)") == "cutlass");
  CHECK(library_of("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
                   "(cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, "
                   "float*)") == "cudnn");
  CHECK(library_of("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, "
                   "float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, "
                   "int, float const*, float const*, bool, int, int)") == "cudnn");
  // cuDNN's 3-D engines, seen as "own" on the H200 when a reference-wrapping answer ran
  // KernelBench's 3-D convs (level1/66, level1/72, level2/27, level2/78).
  CHECK(library_of("void implicit_convolveNd_sgemm<float, 3, 1024, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, "
                   "float const*, int, float*, float const*, kernel_convNd_params, unsigned long long, int, float, "
                   "float, int, float const*, float const*, bool, int, int)") == "cudnn");
  CHECK(library_of("void convolveNd_dgrad_float_engine<float, 3, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, "
                   "int, float const*, int, float*, kernel_gradNd_params, unsigned long long, int, unsigned long long, "
                   "int, float, int, int)") == "cudnn");
  CHECK(library_of("void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, "
                   "float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)") ==
        "cudnn");
  CHECK(library_of("triton_poi_fused_add_relu_0") == "triton");
  CHECK(library_of("void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<int>(int*)") == "cub");
  CHECK(library_of("void cub::CUB_300001_SM_900::detail::reduce::DeviceReduceKernel<float>(float*)") == "cub");
}

TEST_CASE("library_of leaves the candidate's kernels alone, also with c10 types in their templates") {
  CHECK(library_of("void (anonymous namespace)::linear_bias_relu_kernel<false>(float const*, float const*, float const*, "
                   "float*, int, int, int, bool)") == "");
  CHECK(library_of("(anonymous namespace)::gelu_vec4_kernel(float4 const*, float4*, long)") == "");
  CHECK(library_of("void my_kernel<c10::Half>(c10::Half const*, c10::Half*)") == "");
  CHECK(library_of("fused_gemm_kernel") == "");
}

TEST_CASE("matches_own: exact name, mangled name or qualified name") {
  const auto k = record("void (anonymous namespace)::linear_bias_relu_kernel<false>(float const*, int)", 1.0);
  CHECK(matches_own(k, {"void (anonymous namespace)::linear_bias_relu_kernel<false>(float const*, int)"}));
  CHECK(matches_own(k, {k.mangled}));
  CHECK(matches_own(k, {"(anonymous namespace)::linear_bias_relu_kernel<false>"}));
  CHECK_FALSE(matches_own(k, {"void (anonymous namespace)::linear_bias_relu_kernel<true>(float const*, int)"}));
  CHECK_FALSE(matches_own(k, {}));
}

TEST_CASE("attribute_kernels with the candidate's list: listed kernels own, the rest library or other") {
  const std::vector<KernelRecord> records = {
      record("void (anonymous namespace)::my_gemm<true>(float const*, float*)", 3.0, 256, 512, 64, 1),
      record("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT", 1.0, 384, 132, 168, 2),
      record("mystery_kernel", 1.0, 128, 64, 16, 3),
  };
  const Attribution a = attribute_kernels(records, {"void (anonymous namespace)::my_gemm<true>(float const*, float*)"});
  REQUIRE(a.kernels.size() == 3);
  CHECK(a.kernels[0].own);
  CHECK(a.kernels[0].source == "own");
  CHECK_FALSE(a.kernels[1].own);
  CHECK(a.kernels[1].source == "cublas");
  CHECK_FALSE(a.kernels[2].own);
  CHECK(a.kernels[2].source == "other");
  CHECK(a.total_ms == doctest::Approx(5.0));
  CHECK(a.own_ms == doctest::Approx(3.0));
  CHECK(a.library_ms == doctest::Approx(2.0));
  CHECK(a.own_share == doctest::Approx(0.6));
}

TEST_CASE("attribute_kernels without a list (kernelbench): whatever no library claims is own") {
  const std::vector<KernelRecord> records = {
      record("(anonymous namespace)::fused(float const*, float*)", 1.0, 256, 512, 32, 1),
      record("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
             "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
             3.0, 128, 1024, 16, 2),
  };
  const Attribution a = attribute_kernels(records, {});
  CHECK(a.kernels[0].own);
  CHECK_FALSE(a.kernels[1].own);
  CHECK(a.kernels[1].source == "aten");
  CHECK(a.own_share == doctest::Approx(0.25));
  CHECK(attribute_kernels({}, {}).own_share == 0.0);
}
