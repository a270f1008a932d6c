#include "compiler/micro_header.h"

#include <algorithm>
#include <regex>
#include <unordered_set>

#include <fmt/format.h>

#include "common/sha256.h"
#include "common/subprocess.h"
#include "common/switch_value.h"
#include "compiler/cached_artifact.h"
#include "compiler/cpp_tokens.h"
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

namespace {
// The code's words and its `<` (for `get<` and `operator<<`), the words of preprocessor lines
// included (a macro's body names what it uses too); comments and literals are not code here.
std::optional<std::vector<std::string>> code_words(std::string_view code) {
  const auto tokens = cpp_tokens(code);
  if (!tokens) return std::nullopt;
  std::vector<std::string> out;
  for (const CppToken& t : *tokens) {
    if (t.kind == CppTokenKind::Preprocessor) {
      const auto inner = code_words(std::string_view(t.text).substr(1));
      if (!inner) return std::nullopt;
      out.insert(out.end(), inner->begin(), inner->end());
    } else if (t.kind == CppTokenKind::Word || (t.kind == CppTokenKind::Punct && t.text == "<")) {
      out.push_back(t.text);
    }
  }
  return out;
}
}  // namespace

bool micro_needs_full_std(std::string_view cuda_sources) {
  // What only the Full flavour's headers declare (and a few names <algorithm> may bring on one
  // libstdc++ and not another): streams, <functional>, <memory>, the maps, <optional>, <tuple>,
  // <numeric>, the exception classes.
  static const std::unordered_set<std::string_view> full = {
      "cout", "cerr", "clog", "endl", "flush", "ostream", "istream", "iostream", "stringstream", "ostringstream",
      "istringstream", "fstream", "ofstream", "ifstream", "stringbuf", "setw", "setprecision", "function", "bind",
      "invoke", "hash", "reference_wrapper", "plus", "minus", "multiplies", "divides", "greater", "less", "equal_to",
      "map", "multimap", "unordered_map", "unordered_multimap", "unique_ptr", "shared_ptr", "weak_ptr", "make_unique",
      "make_shared", "optional", "nullopt", "make_optional", "tuple", "make_tuple", "tie", "forward_as_tuple", "apply",
      "tuple_size", "tuple_element", "accumulate", "iota", "inner_product", "partial_sum", "adjacent_difference",
      "reduce", "transform_reduce", "gcd", "lcm", "exclusive_scan", "inclusive_scan", "exception", "runtime_error",
      "invalid_argument", "logic_error", "out_of_range", "domain_error", "length_error", "range_error",
      "overflow_error", "underflow_error"};
  const auto words = code_words(cuda_sources);
  if (!words) return true;  // text the reader does not take (a raw string): the header as it was
  const std::vector<std::string>& w = *words;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (full.count(w[i])) return true;
    const bool next_is_lt = i + 1 < w.size() && w[i + 1] == "<";
    if (w[i] == "get" && next_is_lt) return true;                                      // std::get<0>(t)
    if (w[i] == "operator" && next_is_lt && i + 2 < w.size() && w[i + 2] == "<") return true;  // a part it prints
    if (w[i] == "using" && i + 2 < w.size() && w[i + 1] == "namespace" && w[i + 2] == "std") return true;
  }
  return false;
}

bool micro_full_std_forced() {
  static const bool on = environment_switch(kMicroFullStdEnv, false);
  return on;
}

bool micro_header_enabled() {
  // Read once per process, as KAGENT_SHARED_BINDING: the switch is for a whole run.
  static const bool on = environment_switch(kMicroHeaderEnv, true);
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
