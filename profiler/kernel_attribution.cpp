#include "profiler/kernel_attribution.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "profiler/kernel_names.h"

namespace kagent::profiler {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Scope prefixes of the qualified name (after "(anonymous namespace)::" is dropped).
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kScopes{{
    {"at::", "aten"},
    {"at_cuda_detail::cub::", "cub"},   // CUB vendored inside ATen
    {"at_cuda_detail::", "aten"},
    {"c10::", "aten"},
    {"pytorch_flash::", "flash_attention"},
    {"fmha::", "flash_attention"},
    {"cublasLt::", "cublas"},
    {"cudnn::", "cudnn"},
    {"cutlass::", "cutlass"},
    {"cute::", "cutlass"},
    {"cub::", "cub"},
    {"thrust::", "thrust"},
    {"cufft", "cufft"},
    {"nccl", "nccl"},
}};

// Prefixes of the bare kernel name (C-linkage library kernels carry no namespace).
constexpr std::array<std::pair<std::string_view, std::string_view>, 48> kPrefixes{{
    {"nvjet_", "cublas"},  // cuBLASLt's Hopper/Blackwell GEMMs
    // PyTorch's memory-efficient attention (xformers' CUTLASS kernels): fp32 SDPA runs these
    {"fmha_cutlassF", "mem_efficient_attention"},
    {"fmha_cutlassB", "mem_efficient_attention"},
    {"sm90_xmma_", "cublas"},
    {"sm80_xmma_", "cublas"},
    {"sm86_xmma_", "cublas"},
    {"sm89_xmma_", "cublas"},
    {"sm75_xmma_", "cublas"},
    {"sm70_xmma_", "cublas"},
    {"sm100_xmma_", "cublas"},
    {"ampere_", "cublas"},
    {"volta_", "cublas"},
    {"turing_", "cublas"},
    {"hopper_", "cublas"},
    {"cutlass_", "cutlass"},
    {"gemv2N_kernel", "cublas"},
    {"gemv2T_kernel", "cublas"},
    {"gemvNSP_kernel", "cublas"},
    {"gemmSN_", "cublas"},
    {"gemmk1_kernel", "cublas"},
    {"splitKreduce_kernel", "cublas"},
    {"dot_kernel", "cublas"},
    {"reduce_1Block_kernel", "cublas"},
    {"scal_kernel", "cublas"},
    {"axpy_kernel", "cublas"},
    // cuDNN's engines that carry no namespace: implicit_convolve_sgemm, implicit_convolveNd_sgemm
    // (3-D convs), convolveNd_dgrad_float_engine (transposed 3-D convs), wgrad_alg0_engine, ...
    {"implicit_convolve", "cudnn"},
    {"explicit_convolve", "cudnn"},
    {"precomputed_convolve", "cudnn"},
    {"convolveNd_", "cudnn"},
    {"wgrad_alg", "cudnn"},
    {"dgrad_engine", "cudnn"},
    {"dgrad2d_", "cudnn"},
    {"dgrad_1x1_", "cudnn"},
    {"conv2d_grouped_direct_kernel", "cudnn"},
    {"im2col4d_kernel", "cudnn"},
    {"flip_filter", "cudnn"},
    {"scalePackedTensor_kernel", "cudnn"},
    {"kern_precompute_indices", "cudnn"},
    {"fft2d_", "cudnn"},
    {"fft1d_", "cudnn"},
    {"winograd", "cudnn"},
    {"generateWinogradTilesKernel", "cudnn"},
    {"nchwToNhwcKernel", "cudnn"},
    {"nhwcToNchwKernel", "cudnn"},
    {"triton_", "triton"},  // torch.compile (Inductor) kernels
    {"regular_fft", "cufft"},
    {"vector_fft", "cufft"},
    {"generate_seed_pseudo", "curand"},
}};

// Words anywhere in the (lower-cased) name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kWords{{
    {"cublas", "cublas"},
    {"cudnn", "cudnn"},
    {"xmma_", "cublas"},  // cuBLAS and cuDNN share XMMA; either way a library
    {"cask_", "cudnn"},
    {"cutensor", "cutensor"},
    {"flash_fwd", "flash_attention"},
}};

}  // namespace

std::string library_of(std::string_view name) {
  std::string q = qualified_name(name);
  for (size_t pos = q.find("(anonymous namespace)::"); pos != std::string::npos; pos = q.find("(anonymous namespace)::"))
    q.erase(pos, 23);
  for (const auto& [scope, lib] : kScopes)
    if (starts_with(q, scope)) return std::string(lib);
  // The bare kernel name: the last scope component, template arguments dropped.
  std::string_view bare = q;
  if (const size_t lt = bare.find('<'); lt != std::string_view::npos) bare = bare.substr(0, lt);
  if (const size_t sep = bare.rfind("::"); sep != std::string_view::npos) bare = bare.substr(sep + 2);
  for (const auto& [prefix, lib] : kPrefixes)
    if (starts_with(bare, prefix) || starts_with(q, prefix)) return std::string(lib);
  const std::string l = lower(q);
  for (const auto& [word, lib] : kWords)
    if (contains(l, word)) return std::string(lib);
  return {};
}

bool matches_own(const KernelRecord& kernel, const std::vector<std::string>& own_names) {
  const std::string q = qualified_name(kernel.name);
  for (const auto& own : own_names) {
    if (own == kernel.name || own == kernel.mangled) return true;
    if (qualified_name(own) == q) return true;
  }
  return false;
}

Attribution attribute_kernels(const std::vector<KernelRecord>& records, const std::vector<std::string>& own_names,
                              Unclaimed unclaimed) {
  Attribution a;
  a.kernels.reserve(records.size());
  for (const auto& r : records) {
    KernelSourceInfo info;
    const std::string lib = library_of(r.name);
    if (!own_names.empty()) {
      info.own = matches_own(r, own_names);
      info.source = info.own ? "own" : lib.empty() ? "other" : lib;
    } else {
      info.own = lib.empty() && unclaimed == Unclaimed::Own;
      info.source = !lib.empty() ? lib : info.own ? "own" : "unclaimed";
    }
    const double ms = r.duration_ms();
    a.total_ms += ms;
    (info.own ? a.own_ms : a.library_ms) += ms;
    a.kernels.push_back(std::move(info));
  }
  a.own_share = a.total_ms > 0 ? a.own_ms / a.total_ms : 0.0;
  return a;
}

}  // namespace kagent::profiler
