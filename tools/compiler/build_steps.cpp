#include "compiler/build_steps.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "build_info.h"
#include "common/guarded_spawn.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "compiler/compile_diagnostics.h"
#include "compiler/micro_header.h"

namespace fs = std::filesystem;

namespace kagent {

void write_text_file(const fs::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::chrono::milliseconds CompileLimits::left() const {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(ms, std::chrono::milliseconds(0));
}

RunResult CompileLimits::run(SpawnOptions so) const {
  if (memory_mb) so.address_space_limit = static_cast<std::uint64_t>(memory_mb) << 20;
  so.nice = kCompilerNice;
  so.idle_priority = true;
  so.cpus = cpus;
  return run_command(so, left());
}

std::string CompileLimits::hit(const RunResult& r) const {
  if (r.timed_out) return reason::kCompileTimeout;
  const bool failed = !r.exit.exited || r.exit.code != 0;
  if (failed && memory_mb && reports_memory_exhaustion(r.output)) return reason::kCompileMemory;
  return "";
}

std::string CompileLimits::describe(const std::string& limit) const {
  if (limit == reason::kCompileTimeout)
    return fmt::format("kagent: the compile ran past {} ({} s) and was killed with every process it started", limit,
                       timeout.count());
  return fmt::format("kagent: a compiler process ran out of {} ({} MiB of address space) and the compile was "
                     "stopped (deep template instantiation, huge unrolled loops or constant tables; or a limit too "
                     "low for this toolchain)",
                     limit, memory_mb);
}

namespace {

// A positive whole number from the environment, or `fallback` when the variable is unset.
std::size_t env_number(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (errno || *end || n == 0 || v[0] == '-')
    throw std::invalid_argument(fmt::format("{} must be a positive whole number, not '{}'", name, v));
  return static_cast<std::size_t>(n);
}

}  // namespace

NvccSetup base_setup(const CompileOptions& o) {
  NvccSetup s;
  s.nvcc = resolve_nvcc(o.nvcc);
  s.arch = o.arch;
  s.torch_prefix = build::kTorchPrefix;
  s.linker = default_linker();
  (void)gencode_for(s.arch);  // validates the arch
  return s;
}

CompileLimits resolve_compile_limits(const CompileOptions& o) {
  CompileLimits l;
  l.timeout = o.timeout ? *o.timeout
                        : std::chrono::seconds(env_number("KAGENT_COMPILE_TIMEOUT",
                                                          static_cast<std::size_t>(kDefaultCompileTimeout.count())));
  l.memory_mb = o.memory_limit_mb ? *o.memory_limit_mb : env_number("KAGENT_COMPILE_MEMORY_MB", kDefaultCompileMemoryMb);
  l.deadline = std::chrono::steady_clock::now() + l.timeout;
  l.cpus = o.cpus;
  return l;
}

std::string compilers_identity(const std::string& nvcc) {
  return nvcc_identity(nvcc) + "|" + nvcc_identity("gcc") + "|" + build::kTorchVersion;
}

std::string nvcc_identity(const std::string& nvcc) {
  fs::path p = resolve_in_path(nvcc);  // the binary the spawn will run
  std::error_code ec;
  fs::path canon = fs::canonical(p, ec);
  struct stat st{};
  if (ec || ::stat(canon.c_str(), &st) != 0) return "unknown:" + nvcc;
  return fmt::format("{}:{}:{}", canon.string(), st.st_size, st.st_mtim.tv_sec);
}

size_t count_lines(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

fs::path ensure_header_folder(const CompileCache& cache, std::string_view kind, std::string_view text,
                              std::initializer_list<std::string_view> names) {
  const fs::path dir = cache.file_path(std::string(kind), sha256_hex(text).substr(0, 16));
  for (std::string_view name : names) {
    const fs::path header = dir / name;
    if (fs::exists(header)) continue;
    fs::create_directories(header.parent_path());
    const fs::path tmp = cache.temp_file_path(header.filename().string());
    write_text_file(tmp, text);
    cache.publish_file(tmp, header);
  }
  return dir;
}

namespace {

const std::optional<std::string>& slim_ops() {
  // Read once: the torch headers kagent was built with do not change while it runs.
  static const std::optional<std::string> text = slim_ops_text(fs::path(build::kTorchPrefix) / "include");
  return text;
}

}  // namespace

ShimTier first_light_tier(bool slim) { return slim && slim_ops() ? ShimTier::Slim : ShimTier::Lite; }

namespace {
void publish_once(const CompileCache& cache, const fs::path& header, std::string_view text) {
  if (fs::exists(header)) return;
  fs::create_directories(header.parent_path());
  const fs::path tmp = cache.temp_file_path(header.filename().string());
  write_text_file(tmp, text);
  cache.publish_file(tmp, header);
}
}  // namespace

fs::path ensure_shim(const CompileCache& cache, ShimTier tier, MicroStd micro_std) {
  // The shim's text lives in one file; torch/extension.h, torch/torch.h and torch/types.h
  // include it. (Three copies of the text relied on `#pragma once` taking identical files for
  // one: gcc does so only when their mtimes fall in the same second, so a folder written across
  // a second's boundary redefined torch::kUInt8 in every cuda.cu that includes two of them.)
  std::string text = extension_shim_text(tier);
  if (tier == ShimTier::Micro) {
    text += "\n// micro " + sha256_hex(micro_header_text());  // a folder per micro header
    if (micro_std == MicroStd::Full) text = std::string(kMicroFullStdDefine) + text;  // and per flavour
  }
  std::string ops;
  if (tier == ShimTier::Slim) {
    if (!slim_ops()) throw std::runtime_error("the Slim torch/extension.h needs torch's ATen/ops headers");
    ops = *slim_ops();
    text += "\n// ops " + sha256_hex(ops);  // a changed torch gets a folder of its own
  }
  const fs::path dir = cache.file_path("shim-v2", sha256_hex(text).substr(0, 16));
  publish_once(cache, dir / kShimHeader, text);
  if (tier == ShimTier::Slim) publish_once(cache, dir / kSlimOpsHeader, ops);
  if (tier == ShimTier::Micro) publish_once(cache, dir / kMicroHeaderPath, micro_header_text());
  for (std::string_view name : kShimmedTorchHeaders)
    publish_once(cache, dir / name, fmt::format("#pragma once\n#include <{}>\n", kShimHeader));
  return dir;
}

NvccSetup setup_for_tier(NvccSetup base, ShimTier tier, const CompileCache& cache, bool needs_python, MicroStd micro_std) {
  if (tier != ShimTier::Full) {
    base.shim_include = ensure_shim(cache, tier, micro_std);
  } else if (needs_python) {
    base.python_include = python_include_dir();
  }
  return base;
}

fs::path python_include_dir() {
  SpawnOptions so;
  so.argv = {build::kPythonExecutable, "-c", "import sysconfig; print(sysconfig.get_paths()['include'], end='')"};
  RunResult r = run_command(so, std::chrono::seconds(60));
  if (!r.exit.exited || r.exit.code != 0) return {};
  return fs::path(r.output);
}

void hash_toolchain(Sha256& h, const std::string& nvcc, const std::string& arch, ShimTier first_tier) {
  h.update(nvcc_identity(nvcc))
      .update(build::kTorchVersion)
      .update(arch)
      .update(to_string(first_tier))
      .update(extension_shim_text(ShimTier::Lite))
      .update(extension_shim_text(ShimTier::ATen));
  if (first_tier == ShimTier::Slim || first_tier == ShimTier::Micro)
    h.update(extension_shim_text(ShimTier::Slim)).update(slim_ops().value_or(""));
  if (first_tier == ShimTier::Micro)
    h.update(extension_shim_text(ShimTier::Micro)).update(micro_header_text()).update(micro_support_source());
}

bool includes_torch_header(std::string_view source) {
  for (std::string_view header : kShimmedTorchHeaders)
    if (source.find(header) != std::string_view::npos) return true;
  return false;
}

std::string header_clashing_with_slim(std::string_view source) {
  static const std::regex include(R"re((?:^|\n)[ \t]*#[ \t]*include[ \t]*[<"]((ATen/ATen|ATen/Functions|torch/all|torch/script)\.h|ATen/ops/(\w+)\.h)[>"])re");
  using It = std::regex_iterator<std::string_view::const_iterator>;
  for (auto it = It(source.begin(), source.end(), include); it != It(); ++it) {
    const auto& m = *it;
    if (m[2].matched || is_common_op(m[3].str())) return m[1].str();
  }
  return {};
}

std::optional<ShimTier> next_tier(ShimTier tier, std::string_view source, const std::vector<Diagnostic>& errors,
                                  const fs::path& torch_prefix) {
  if (tier == ShimTier::Full || !includes_torch_header(source)) return std::nullopt;
  // Micro is a guess too, for files that include no other torch header: whatever fails with it is
  // built with the next tier, whose outcome is the answer's.
  if (tier == ShimTier::Micro) return first_light_tier(true);
  // cudafe++'s wording first, then g++'s (the .cpp part of a load_inline extension), whose
  // quotes are typographic under a UTF-8 locale.
  static const std::string q = "(?:'|\xE2\x80\x98|\xE2\x80\x99)";
  static const std::regex frontend(R"re(namespace "(torch|pybind11|py)(::\w+)*" has no member|"(PyObject|Py_\w+)"|is not a member of )re" +
                                   q + R"re((torch|pybind11|py)(::\w+)*)re" + q + "|" + q + R"re((PyObject|Py_\w+))re" + q);
  static const std::regex aten_ns(R"re(namespace "(at|torch|c10)(::\w+)*" has no member|is not a member of )re" + q +
                                  R"re((at|torch|c10)(::\w+)*)re" + q);
  static const std::regex undefined(R"re(^identifier "(\w+)" is undefined$|^)re" + q + R"re((\w+))re" + q +
                                    R"re( was not declared in this scope.*)re");
  static const std::regex tensor_operator(R"re(^no operator ".*" matches these operands.*Tensor|^no match for )re" + q +
                                          R"re(operator.*Tensor)re");
  // An ATen function: ATen/ops/<name>.h says so. One that is not a common operator Lite lacks as
  // Slim does (it carries the same ones).
  auto aten_function = [&](const std::string& name) {
    return fs::exists(torch_prefix / "include" / "ATen" / "ops" / (name + ".h"));
  };
  auto uncommon_aten_function = [&](const std::string& name) { return !is_common_op(name) && aten_function(name); };
  static const std::regex missing_member(R"re(namespace "(?:at|torch)" has no member "(\w+)"|)re" + q +
                                         R"re((\w+))re" + q + R"re( is not a member of )re" + q + R"re((?:at|torch))re" + q);
  bool aten = false, full = false;
  std::smatch m;
  auto named = [&m] { return (m[1].matched ? m[1] : m[2]).str(); };  // the name, in either wording
  if (tier == ShimTier::Slim) {
    // Slim is a guess that saves seconds; whatever fails with it is built as before Slim existed,
    // with Lite, unless the errors show Lite would fail the same way (a Tensor operator, an
    // uncommon ATen function): then ATen at once, where Lite's failure would have led.
    for (const auto& d : errors) {
      if (std::regex_search(d.message, tensor_operator)) aten = true;
      if (std::regex_search(d.message, m, missing_member) && uncommon_aten_function(named())) aten = true;
      if (std::regex_match(d.message, m, undefined) && uncommon_aten_function(named())) aten = true;
    }
    return aten ? ShimTier::ATen : ShimTier::Lite;
  }
  for (const auto& d : errors) {
    if (d.file == "torch/extension.h" || d.file == "torch/torch.h") full = true;  // clashes with real torch headers
    if (tier == ShimTier::ATen && std::regex_search(d.message, frontend)) full = true;
    if (tier == ShimTier::Lite) {
      if (std::regex_search(d.message, aten_ns) || std::regex_search(d.message, tensor_operator)) aten = true;
      // An unqualified ATen function (`using namespace torch;`).
      if (std::regex_match(d.message, m, undefined) && aten_function(named())) aten = true;
    }
  }
  if (full) return ShimTier::Full;
  if (aten) return ShimTier::ATen;
  return std::nullopt;
}

}  // namespace kagent
