#include "compiler/host_pch.h"

#include <cstring>

#include <fmt/format.h>

#include "common/files.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "compiler/cached_artifact.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {

constexpr std::string_view kCppPchVersion = "kagent-cpp-pch-1";
constexpr std::string_view kCudaPchVersion = "kagent-cuda-pch-1";
constexpr std::string_view kCppHeader = "kagent_cpp_part.h";
constexpr std::string_view kCudaHeader = "kagent_cuda_prefix.h";

std::string cpp_header_text(ShimTier tier) {
  return "// kagent: torch headers of a load_inline extension's C++ part, precompiled (host_pch.h)\n" +
         extension_shim_includes(tier) +
         "#include <torch/library.h>\n#include <cstdint>\n#include <optional>\n#include <string>\n#include <tuple>\n"
         "#include <type_traits>\n#include <utility>\n#include <vector>\n";
}

}  // namespace

std::optional<fs::path> ensure_cpp_part_pch(const CompileCache& cache, const NvccSetup& setup, ShimTier tier,
                                            const CompileLimits& limits, std::vector<CompileStep>* steps) {
  if (tier == ShimTier::Full) return std::nullopt;  // the real extension.h needs Python.h and pybind11
  if (tier == ShimTier::Micro) return std::nullopt;  // its Tensor is not torch/library.h's: never a C++ part
  const std::string text = cpp_header_text(tier);
  Sha256 h;
  h.update(kCppPchVersion).update(text).update(shell_join(host_compile_argv(setup, "<header>", "<gch>")));
  h.update(compilers_identity(setup.nvcc));
  const std::string key = h.hex_digest();
  auto header = cached_artifact(cache, key, [&](const fs::path& dir) {
    BuiltArtifact b{dir / kCppHeader, {}, false};
    write_text_file(b.path, text);
    // nvcc's own host command for a .cpp, told to write a precompiled header: the same flags
    // as the C++ part's compile, so g++ accepts the header there.
    SpawnOptions so;
    so.argv = host_compile_argv(setup, b.path, b.path.string() + ".gch");
    so.argv.insert(so.argv.begin() + 1, {"-x", "c++"});
    so.argv.insert(so.argv.end(), {"-Xcompiler", "-x,c++-header"});
    so.env_set = {"TMPDIR=" + dir.string()};
    const RunResult r = limits.run(so);
    if (steps) steps->push_back(step_of("pch main.cpp headers", r));
    b.limit = !limits.hit(r).empty();
    if (!r.succeeded()) b.why = "the C++ part's precompiled header did not build:\n" + r.output;
    return b;
  });
  // nvcc splits -Xcompiler values at commas.
  if (header && header->string().find(',') != std::string::npos) return std::nullopt;
  return header;
}

namespace {

std::string cuda_prefix_key(const NvccSetup& setup) {
  Sha256 h;
  h.update(kCudaPchVersion).update(kCudaImplicitHeaders).update(shell_join(candidate_compile_argv(setup, "cuda.cu", "cuda.o")));
  h.update(compilers_identity(setup.nvcc));
  return h.hex_digest();
}

// nvcc's form, _<hash>_<length of the name>_<name>_<hash>, fixed for every answer using the prefix.
std::string module_id_of(const std::string& key) { return fmt::format("_{}_7_cuda_cu_{}", key.substr(0, 8), key.substr(8, 8)); }

}  // namespace

std::string cuda_prefix_module_id(const NvccSetup& setup) { return module_id_of(cuda_prefix_key(setup)); }

std::optional<CudaPrefixPch> ensure_cuda_part_pch(const CompileCache& cache, const NvccSetup& setup,
                                                  const CompileLimits& limits, std::vector<CompileStep>* steps) {
  const auto argv = candidate_compile_argv(setup, "cuda.cu", "cuda.o");
  const std::string key = cuda_prefix_key(setup);
  const std::string module_id = module_id_of(key);
  auto header = cached_artifact(cache, key, [&](const fs::path& dir) {
    BuiltArtifact b{dir / kCudaHeader, {}, false};
    write_text_file(dir / "cuda.cu", kCudaImplicitHeaders);
    std::string output, command;
    std::vector<std::string> environment;
    fs::path source;
    SplitOptions opt;
    opt.module_id = module_id;
    opt.steps = steps;
    opt.label = "pch cuda.cu prefix";
    opt.before_host_compile = [&](HostCompile& hc) {
      output = read_file(hc.source);
      command = hc.command;
      environment = hc.environment;
      source = hc.source;
    };
    SpawnOptions so;
    so.argv = argv;
    so.cwd = dir.string();  // the file is "cuda.cu" in cudafe++'s output, as in an answer's build
    so.env_set = {"TMPDIR=" + dir.string()};
    const RunResult r = run_nvcc_split(so, limits, dir / "nvcc", opt);
    b.limit = !limits.hit(r).empty();
    if (!r.succeeded() || output.empty()) {
      b.why = "the CUDA part's prefix did not build:\n" + r.output;
      return b;
    }
    // cudafe++ ends its output with the stub file's include; the prefix is everything before.
    const std::string stub = fmt::format("\n# 1 \"cuda.cudafe1.stub.c\"\n#define _NV_ANON_NAMESPACE");
    size_t end = output.rfind(stub);
    if (end == std::string::npos) {
      b.why = "cudafe++'s output does not end as kagent expects (no stub include)";
      return b;
    }
    while (end > 0 && output[end - 1] == '\n') --end;
    write_text_file(b.path, output.substr(0, end) + "\n");
    const auto pch = host_compile_to_pch(command, source, b.path, b.path.string() + ".gch");
    if (!pch) {
      b.why = "nvcc's host compile is not of the shape kagent precompiles: " + command;
      return b;
    }
    SpawnOptions gch = so;
    gch.argv = {"/bin/sh", "-c", *pch};
    gch.env_set.insert(gch.env_set.end(), environment.begin(), environment.end());
    const RunResult g = limits.run(gch);
    if (steps) steps->push_back(step_of("pch cuda.cu prefix gch", g));
    b.limit = !limits.hit(g).empty();
    if (!g.succeeded()) b.why = "the CUDA part's precompiled prefix did not build:\n" + g.output;
    return b;
  });
  if (!header) return std::nullopt;
  return CudaPrefixPch{module_id, *header};
}

bool use_cuda_prefix(const fs::path& source, const CudaPrefixPch& pch) {
  if (!fs::exists(pch.header)) return false;  // the cache emptied meanwhile: the plain build
  const std::string prefix = read_file(pch.header);
  std::string text = read_file(source);
  if (prefix.empty() || text.size() < prefix.size() || std::memcmp(text.data(), prefix.data(), prefix.size()) != 0)
    return false;
  write_text_file(source, "#include \"" + pch.header.string() + "\"\n" + text.substr(prefix.size()));
  return true;
}

}  // namespace kagent
