#include "compiler/micro_header.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "common/sha256.h"
#include "common/subprocess.h"
#include "common/switch_value.h"
#include "compiler/cached_artifact.h"
#include "compiler/extension_shim.h"
#include "micro_support_cpp.h"
#include "micro_tensor_h.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {
constexpr std::string_view kSupportVersion = "kagent-micro-support-1";
}  // namespace

std::string_view micro_header_text() { return kMicroTensorText; }
std::string_view micro_support_source() { return kMicroSupportText; }

bool includes_only_shimmed_torch_headers(std::string_view sources) {
  static const std::regex include(R"re((?:^|\n)[ \t]*#[ \t]*include[ \t]*[<"]((?:torch|ATen|c10|caffe2|pybind11)/[^>"]*|Python\.h)[>"])re");
  using It = std::regex_iterator<std::string_view::const_iterator>;
  for (auto it = It(sources.begin(), sources.end(), include); it != It(); ++it) {
    const std::string header = (*it)[1].str();
    if (std::find(kShimmedTorchHeaders.begin(), kShimmedTorchHeaders.end(), header) == kShimmedTorchHeaders.end())
      return false;
  }
  return true;
}

bool micro_header_enabled() {
  // Read once per process, as KAGENT_SHARED_BINDING: the switch is for a whole run.
  static const bool on = environment_switch("KAGENT_MICRO_HEADER", true);
  return on;
}

std::optional<fs::path> ensure_micro_support(const CompileCache& cache, const NvccSetup& base, const CompileLimits& limits,
                                             std::vector<CompileStep>* steps) {
  Sha256 h;
  h.update(kSupportVersion).update(micro_support_source()).update(micro_header_text());
  h.update(shell_join(host_compile_argv(base, "<src>", "<obj>"))).update(shell_join(link_argv(base, {"<obj>"}, "<so>")));
  h.update(compilers_identity(base.nvcc));
  const std::string key = h.hex_digest();
  const std::string name = fmt::format("libkagent_micro_{}.so", key.substr(0, 16));
  return cached_artifact(cache, key, [&](const fs::path& dir) {
    BuiltArtifact b{dir / name, {}, false};
    write_text_file(dir / "micro_support.cpp", micro_support_source());
    SpawnOptions so;
    so.argv = host_compile_argv(base, dir / "micro_support.cpp", dir / "micro_support.o");
    so.env_set = {"TMPDIR=" + dir.string()};
    const RunResult c = limits.run(so);
    if (steps) steps->push_back(step_of("micro support compile", c));
    if (!c.succeeded()) {
      b.limit = !limits.hit(c).empty();
      b.why = "the micro header's support library did not compile:\n" + c.output;
      return b;
    }
    so.argv = link_argv(base, {dir / "micro_support.o"}, b.path);
    so.argv.insert(so.argv.end(), {"-Xlinker", "-soname," + name});
    const RunResult l = limits.run(so);
    if (steps) steps->push_back(step_of("micro support link", l));
    b.limit = !limits.hit(l).empty();
    if (!l.succeeded()) b.why = "the micro header's support library did not link:\n" + l.output;
    return b;
  });
}

std::vector<std::string> micro_link_flags(const fs::path& support) {
  // The library is named by its path so that its SONAME becomes the NEEDED entry; the loader then
  // finds the copy beside the answer's library through $ORIGIN.
  return {support.string(), "-Xlinker", "-rpath,$ORIGIN"};
}

}  // namespace kagent
