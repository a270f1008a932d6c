#include "compiler/nvcc_command.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "build_info.h"
#include "common/guarded_spawn.h"

namespace kagent {

std::string gencode_for(std::string_view arch) {
  static const std::regex re(R"(sm_(\d+)([af]?))");
  std::cmatch m;
  if (!std::regex_match(arch.begin(), arch.end(), m, re))
    throw std::invalid_argument(fmt::format("unknown CUDA arch '{}' (expected e.g. sm_90a, sm_80)", arch));
  const std::string v = std::string(m[1]) + std::string(m[2]);
  return fmt::format("-gencode=arch=compute_{},code=sm_{}", v, v);
}

std::string arch_for_compute_capability(int major, int minor) {
  if (major <= 0 || minor < 0) throw std::invalid_argument(fmt::format("bad compute capability {}.{}", major, minor));
  // Hopper and later have arch-specific ("a") instructions; earlier GPUs do not.
  return fmt::format("sm_{}{}{}", major, minor, major >= 9 ? "a" : "");
}

std::string default_linker() {
  const std::string gold = resolve_in_path("ld.gold");
  return gold.find('/') != std::string::npos && ::access(gold.c_str(), X_OK) == 0 ? "gold" : "";
}

std::optional<std::string> folder_nvcc_cannot_take(const std::filesystem::path& folder) {
  if (folder.string().find(',') == std::string::npos) return std::nullopt;
  return fmt::format("the cache folder {} has a comma in its path, which nvcc reads as a list separator; "
                     "choose one without (--cache-dir or KAGENT_CACHE_DIR)",
                     folder.string());
}

std::string resolve_nvcc(std::string_view option) {
  if (!option.empty()) return std::string(option);
  if (const char* env = std::getenv("KAGENT_NVCC"); env && *env) return env;
  return build::kNvcc;
}

namespace {

// Flags both compiles share; they decide the ABI and must match libtorch's.
void common_host_flags(const NvccSetup& s, std::vector<std::string>& a) {
  a.insert(a.end(), {"-std=c++17", "-O3", "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden",
                     "-D_GLIBCXX_USE_CXX11_ABI=1"});
  // The shim folder comes first so `#include <torch/extension.h>` finds kagent's light one.
  if (!s.shim_include.empty()) a.push_back("-I" + s.shim_include.string());
  a.push_back("-isystem");
  a.push_back((s.torch_prefix / "include").string());
  a.push_back("-isystem");
  a.push_back((s.torch_prefix / "include" / "torch" / "csrc" / "api" / "include").string());
  if (!s.python_include.empty()) {
    a.push_back("-isystem");
    a.push_back(s.python_include.string());
  }
}

}  // namespace

std::vector<std::string> candidate_compile_argv(const NvccSetup& s, const std::filesystem::path& src,
                                                const std::filesystem::path& obj) {
  std::vector<std::string> a{s.nvcc, "-c", src.string(), "-o", obj.string(), gencode_for(s.arch)};
  common_host_flags(s, a);
  // What torch.utils.cpp_extension passes, so code written for load_inline compiles the same.
  a.insert(a.end(), {"--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                     "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__", "-Xptxas", "-v",
                     "-lineinfo"});
  if (!s.params_include.empty())
    a.insert(a.end(), {"-I" + s.params_include.string(), "--pre-include", "kagent/params.h"});
  a.insert(a.end(), s.extra_flags.begin(), s.extra_flags.end());
  return a;
}

std::vector<std::string> host_compile_argv(const NvccSetup& s, const std::filesystem::path& src,
                                           const std::filesystem::path& obj) {
  std::vector<std::string> a{s.nvcc, "-c", src.string(), "-o", obj.string()};
  common_host_flags(s, a);
  return a;
}

std::vector<std::string> link_argv(const NvccSetup& s, const std::vector<std::filesystem::path>& objs,
                                   const std::filesystem::path& so) {
  const std::string lib = (s.torch_prefix / "lib").string();
  std::vector<std::string> a{s.nvcc, "-shared", "-o", so.string()};
  for (const auto& o : objs) a.push_back(o.string());
  // One CUDA runtime in the worker: the shared one torch already loaded.
  a.insert(a.end(), {"-cudart", "shared", "-L" + lib, "-lc10", "-lc10_cuda", "-ltorch_cpu", "-ltorch_cuda", "-ltorch",
                     "-Xlinker", "--no-undefined",
                     // Calls stay inside this .so even if another candidate exports the same names.
                     "-Xlinker", "-Bsymbolic", "-Xlinker", "-rpath," + lib});
  // gold reads libtorch's symbol tables in half the time of the default ld (0.2 s instead of 0.5 s
  // of every compile's critical path, tools/compiler/NOTES.md); the .so is the same.
  if (!s.linker.empty()) a.insert(a.end(), {"-Xcompiler", "-fuse-ld=" + s.linker});
  return a;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !arg.empty();
    for (char c : arg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_=./,:+@%").find(c) != std::string_view::npos))
        plain = false;
    if (plain) {
      out += arg;
    } else {
      out += '\'';
      for (char c : arg) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace kagent
