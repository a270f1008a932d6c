// nvcc command lines for a native candidate: compile the candidate (.cu -> .o), compile
// the cached host registration (.cpp -> .o), link both into a .so against libtorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kagent {

// "sm_90a" -> "-gencode=arch=compute_90a,code=sm_90a". Throws std::invalid_argument
// for anything that is not sm_<digits>[a|f].
std::string gencode_for(std::string_view arch);

// The arch string for a GPU's compute capability: 9.0 -> "sm_90a", 10.0 -> "sm_100a"
// (arch-specific features such as wgmma/tcgen05 need the "a" target; we compile for the
// exact GPU anyway), 8.0 -> "sm_80", 8.9 -> "sm_89".
std::string arch_for_compute_capability(int major, int minor);

// Why nvcc cannot be given `folder` (its paths go into -I, -L and -Xlinker, whose values nvcc
// splits at commas: a folder with one loses every kagent build to torch's, three times slower,
// without a word), or nullopt when it can.
std::optional<std::string> folder_nvcc_cannot_take(const std::filesystem::path& folder);

// nvcc to use: the explicit option, else $KAGENT_NVCC, else the one found at build time.
std::string resolve_nvcc(std::string_view option);

struct NvccSetup {
  std::string nvcc;                      // resolved path
  std::string arch = "sm_90a";
  std::filesystem::path torch_prefix;    // <site-packages>/torch
  std::filesystem::path shim_include;    // folder with kagent's torch/extension.h; empty: none
  std::filesystem::path params_include;  // folder with kagent/params.h, pre-included into the candidate; empty: none
  std::filesystem::path python_include;  // Python.h's folder, which the real torch/extension.h needs
  std::vector<std::string> extra_flags;  // appended to the candidate compile
  std::string linker;                    // the host compiler's -fuse-ld=; empty: its default ld
};

// "gold" where ld.gold is installed (the link's fastest choice that binutils ships), else "".
std::string default_linker();

// The candidate's compile: -c, -Xptxas -v for resources, -lineinfo for the profiler.
std::vector<std::string> candidate_compile_argv(const NvccSetup& s, const std::filesystem::path& src,
                                                const std::filesystem::path& obj);
// The host registration's compile (plain C++ through nvcc, so the same host compiler).
std::vector<std::string> host_compile_argv(const NvccSetup& s, const std::filesystem::path& src,
                                           const std::filesystem::path& obj);
// The link: --no-undefined so a missing symbol fails here, not at dlopen in the worker.
std::vector<std::string> link_argv(const NvccSetup& s, const std::vector<std::filesystem::path>& objs,
                                   const std::filesystem::path& so);

// A shell-pasteable rendering of argv.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace kagent
