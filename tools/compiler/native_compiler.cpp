#include "compiler/native_compiler.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "build_info.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "compiler/binding_generator.h"
#include "compiler/compile_cache.h"
#include "compiler/compile_diagnostics.h"
#include "compiler/extension_shim.h"
#include "compiler/nvcc_command.h"
#include "compiler/params_header.h"
#include "compiler/ptxas_resources.h"
#include "compiler/sass_dump.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {

// Bumped whenever the pipeline changes in a way the command lines do not show.
constexpr std::string_view kPipelineVersion = "kagent-native-2";  // 2: SASS stored and summarised
// cuobjdump takes well under a second on a candidate; this only bounds a broken one.
constexpr std::chrono::seconds kDisassemblyTimeout{60};
constexpr std::string_view kPlaceholderNs = "kagent_0000000000000000";

void write_file(const fs::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// Which nvcc this is, cheaply: its resolved path, size and mtime (no `nvcc --version` run).
std::string nvcc_identity(const std::string& nvcc) {
  fs::path p = nvcc;
  if (p.filename() == p) {  // a bare name: look it up in PATH as the spawn will
    if (const char* path = std::getenv("PATH")) {
      std::stringstream ss(path);
      std::string dir;
      while (std::getline(ss, dir, ':'))
        if (!dir.empty() && fs::exists(fs::path(dir) / p)) {
          p = fs::path(dir) / p;
          break;
        }
    }
  }
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

// A shim folder (torch/extension.h and torch/torch.h), content-addressed inside the cache.
fs::path ensure_shim(const CompileCache& cache, ShimTier tier) {
  const std::string text = extension_shim_text(tier);
  const fs::path dir = cache.file_path("shim", sha256_hex(text).substr(0, 16));
  for (const char* name : {"extension.h", "torch.h"}) {
    const fs::path header = dir / "torch" / name;
    if (fs::exists(header)) continue;
    fs::create_directories(header.parent_path());
    const fs::path tmp = cache.temp_file_path(name);
    write_file(tmp, text);
    cache.publish_file(tmp, header);
  }
  return dir;
}

// What every compiler run of one compile shares: a deadline for all of them together and
// the address space each process may take.
struct Limits {
  std::chrono::steady_clock::time_point deadline;
  std::chrono::seconds timeout;
  std::size_t memory_mb = 0;  // 0: none

  std::chrono::milliseconds left() const {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max(ms, std::chrono::milliseconds(0));
  }
  // Runs one compiler command under these limits.
  RunResult run(SpawnOptions so) const {
    if (memory_mb) so.address_space_limit = static_cast<std::uint64_t>(memory_mb) << 20;
    return run_command(so, left());
  }
  // The limit a finished run ran into, or "" when it failed (or not) on its own.
  std::string hit(const RunResult& r) const {
    if (r.timed_out) return reason::kCompileTimeout;
    const bool failed = !r.exit.exited || r.exit.code != 0;
    if (failed && memory_mb && reports_memory_exhaustion(r.output)) return reason::kCompileMemory;
    return "";
  }
  std::string describe(const std::string& limit) const {
    if (limit == reason::kCompileTimeout)
      return fmt::format("kagent: the compile ran past {} ({} s) and was killed with every process it started",
                         limit, timeout.count());
    return fmt::format("kagent: a compiler process ran out of {} ({} MiB of address space) and the compile was "
                       "stopped (deep template instantiation, huge unrolled loops or constant tables; or a limit too "
                       "low for this toolchain)",
                       limit, memory_mb);
  }
};

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

Limits resolve_limits(const CompileOptions& o) {
  Limits l;
  l.timeout = o.timeout ? *o.timeout
                        : std::chrono::seconds(env_number("KAGENT_COMPILE_TIMEOUT",
                                                          static_cast<std::size_t>(kDefaultCompileTimeout.count())));
  l.memory_mb = o.memory_limit_mb ? *o.memory_limit_mb : env_number("KAGENT_COMPILE_MEMORY_MB", kDefaultCompileMemoryMb);
  l.deadline = std::chrono::steady_clock::now() + l.timeout;
  return l;
}

// The folder holding kagent/params.h, content-addressed inside the cache.
fs::path ensure_params_include(const CompileCache& cache) {
  const std::string_view text = params_header_text();
  const fs::path dir = cache.file_path("include", sha256_hex(text).substr(0, 16));
  const fs::path header = dir / kParamsHeaderName;
  if (fs::exists(header)) return dir;
  fs::create_directories(header.parent_path());
  const fs::path tmp = cache.temp_file_path("params.h");
  write_file(tmp, text);
  cache.publish_file(tmp, header);
  return dir;
}

struct HostObject {
  bool ok = false;
  fs::path object;
  std::string log;    // only when it had to be built
  std::string limit;  // the limit its compile ran into
  long peak_rss_kb = 0;
};

// The per-signature registration object: built once per (types, toolchain), then shared.
HostObject ensure_host_object(const CompileCache& cache, const NvccSetup& setup, const Binding& b,
                              const Limits& limits) {
  const std::string key =
      Sha256()
          .update(kPipelineVersion)
          .update(b.host_source)
          .update(shell_join(host_compile_argv(setup, "<binding.cpp>", "<binding.o>")))
          .update(nvcc_identity(setup.nvcc))
          .update(build::kTorchVersion)
          .hex_digest();
  HostObject h;
  h.object = cache.file_path("bindings", key + ".o");
  h.ok = fs::exists(h.object);
  if (h.ok) return h;
  auto lock = cache.lock(key);
  h.ok = fs::exists(h.object);
  if (h.ok) return h;
  TempDir tmp = cache.make_staging(key);
  const fs::path src = tmp.path() / "binding.cpp", obj = tmp.path() / "binding.o";
  write_file(src, b.host_source);
  const auto argv = host_compile_argv(setup, src, obj);
  SpawnOptions so;
  so.argv = argv;
  so.env_set = {"TMPDIR=" + tmp.path().string()};
  RunResult r = limits.run(so);
  h.log = "$ " + shell_join(argv) + "\n" + r.output;
  h.limit = limits.hit(r);
  h.peak_rss_kb = r.exit.peak_rss_kb;
  if (r.timed_out || !r.exit.exited || r.exit.code != 0) return h;
  cache.publish_file(obj, h.object);
  h.ok = true;
  return h;
}

CompileInfo failure(std::string errors) {
  CompileInfo info;
  info.errors = std::move(errors);
  return info;
}

// Python.h's folder, asked of the build's Python (only when the real extension.h is used).
fs::path python_include_dir() {
  SpawnOptions so;
  so.argv = {build::kPythonExecutable, "-c", "import sysconfig; print(sysconfig.get_paths()['include'], end='')"};
  RunResult r = run_command(so, std::chrono::seconds(60));
  if (!r.exit.exited || r.exit.code != 0) return {};
  return fs::path(r.output);
}

bool includes_torch_header(std::string_view source) {
  return source.find("torch/extension.h") != std::string_view::npos ||
         source.find("torch/torch.h") != std::string_view::npos;
}

// The tier to retry with when `errors` show that `tier`'s header lacked something this
// file uses; nullopt when they are the candidate's own errors.
std::optional<ShimTier> next_tier(ShimTier tier, std::string_view source, const std::vector<Diagnostic>& errors,
                                  const fs::path& torch_prefix) {
  if (tier == ShimTier::Full || !includes_torch_header(source)) return std::nullopt;
  static const std::regex frontend(R"re(namespace "(torch|pybind11|py)(::\w+)*" has no member|"(PyObject|Py_\w+)")re");
  static const std::regex aten_ns(R"re(namespace "(at|torch|c10)(::\w+)*" has no member)re");
  static const std::regex undefined(R"re(^identifier "(\w+)" is undefined$)re");
  static const std::regex tensor_operator(R"re(^no operator ".*" matches these operands.*Tensor)re");
  bool aten = false, full = false;
  std::smatch m;
  for (const auto& d : errors) {
    if (d.file == "torch/extension.h" || d.file == "torch/torch.h") full = true;  // clashes with real torch headers
    if (tier == ShimTier::ATen && std::regex_search(d.message, frontend)) full = true;
    if (tier == ShimTier::Lite) {
      if (std::regex_search(d.message, aten_ns) || std::regex_search(d.message, tensor_operator)) aten = true;
      // An unqualified ATen function (`using namespace torch;`): ATen/ops/<name>.h says so.
      if (std::regex_match(d.message, m, undefined) &&
          fs::exists(torch_prefix / "include" / "ATen" / "ops" / (m[1].str() + ".h")))
        aten = true;
    }
  }
  if (full) return ShimTier::Full;
  if (aten) return ShimTier::ATen;
  return std::nullopt;
}

struct Attempt {
  CompileInfo info;
  std::vector<Diagnostic> errors;
  bool cacheable = false;
};

struct Job {
  const CompileCache& cache;
  const Binding& binding;
  std::string_view source;
  const CompileOptions& options;
  const Limits& limits;
  const fs::path& staging;
};

// One build of the candidate in `job.staging` with `setup`.
Attempt build_once(const Job& job, const NvccSetup& setup) {
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path src = job.staging / "candidate.cu";
  const fs::path obj = job.staging / "candidate.o";
  const fs::path so = job.staging / (job.binding.op_namespace + ".so");
  std::string full_source(job.source);
  if (!full_source.empty() && full_source.back() != '\n') full_source += '\n';
  write_file(src, full_source + job.binding.candidate_suffix);

  // The registration object (rarely missing) builds alongside the candidate.
  auto host_future = std::async(std::launch::async,
                                [&] { return ensure_host_object(job.cache, setup, job.binding, job.limits); });

  DiagnosticsContext ctx;
  ctx.display_name = job.options.display_name;
  ctx.replacements = {{src.string(), job.options.display_name}, {job.staging.string() + "/", ""}};
  if (!setup.shim_include.empty()) ctx.replacements.push_back({setup.shim_include.string() + "/", ""});
  if (!setup.params_include.empty()) ctx.replacements.push_back({setup.params_include.string() + "/", ""});
  ctx.source = job.source;
  ctx.user_lines = static_cast<int>(count_lines(job.source));

  Attempt a;
  CompileInfo& info = a.info;
  info.op_name = job.binding.op_name;
  const auto compile_argv = candidate_compile_argv(setup, src, obj);
  SpawnOptions spawn;
  spawn.argv = compile_argv;
  spawn.env_set = {"TMPDIR=" + job.staging.string()};
  RunResult compiled;
  try {
    compiled = job.limits.run(spawn);
  } catch (const std::exception& e) {
    host_future.wait();
    info.errors = fmt::format("kagent: cannot run nvcc ({}): {}", setup.nvcc, e.what());
    return a;  // not cacheable: a setup problem, not the candidate's
  }
  HostObject host = host_future.get();

  // `log` is what the tools said (parsed for errors); `shown` is the same with temp paths
  // mapped in the tools' output but command lines kept runnable.
  std::string log = compiled.output;
  std::string shown = "$ " + shell_join(compile_argv) + "\n" + map_paths(compiled.output, ctx);
  info.command = shell_join(compile_argv);
  info.limit = job.limits.hit(compiled);
  if (info.limit.empty()) info.limit = host.limit;
  long peak_kb = std::max(compiled.exit.peak_rss_kb, host.peak_rss_kb);
  bool ok = compiled.exit.exited && compiled.exit.code == 0 && !compiled.timed_out;
  if (!host.log.empty()) shown += "\n" + host.log;
  if (ok && host.ok) {
    const auto la = link_argv(setup, {obj, host.object}, so);
    spawn.argv = la;
    RunResult linked = job.limits.run(spawn);
    log += "\n" + linked.output;
    shown += "\n$ " + shell_join(la) + "\n" + map_paths(linked.output, ctx);
    info.command += " && " + shell_join(la);
    ok = linked.exit.exited && linked.exit.code == 0 && !linked.timed_out;
    info.limit = job.limits.hit(linked);
    peak_kb = std::max(peak_kb, linked.exit.peak_rss_kb);
  }
  // A limit's verdict depends on the limit and the machine's load: not cached.
  a.cacheable = host.ok && info.limit.empty();
  info.peak_rss_mb = peak_kb / 1024;

  info.ok = ok && host.ok;
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  info.log = cut_log(shown, job.options.log_limit);
  info.resources = parse_ptxas_resources(compiled.output);
  if (info.ok) {
    info.artifact = so.string();
    // A candidate whose object cannot be disassembled keeps its verdict; the SASS says why it is missing.
    info.sass = disassemble(obj, job.staging / "candidate.sass.gz", resolve_cuobjdump(job.options.cuobjdump),
                            job.options.arch, kDisassemblyTimeout);
  } else if (!info.limit.empty()) {
    info.errors = job.limits.describe(info.limit);
  } else if (!host.ok) {
    info.errors = "kagent: the host registration failed to compile (an internal error; see the log)";
  } else {
    a.errors = parse_errors(log, ctx);
    info.errors = a.errors.empty() ? "compilation failed (no error message recognised; see the log)\n"
                                   : format_errors(a.errors, job.options.max_errors);
    info.reason = classify_reason(a.errors);
  }
  return a;
}

}  // namespace

CompileInfo compile_native(const ProblemSpec& spec, std::string_view source, const CompileOptions& options) {
  Binding placeholder;
  NvccSetup setup;
  Limits limits;
  try {
    limits = resolve_limits(options);
    setup.nvcc = resolve_nvcc(options.nvcc);
    setup.arch = options.arch;
    setup.torch_prefix = build::kTorchPrefix;
    setup.extra_flags = options.extra_flags;
    (void)gencode_for(setup.arch);  // validates the arch
    placeholder = generate_binding(spec, source, kPlaceholderNs);
  } catch (const std::invalid_argument& e) {
    return failure(std::string("kagent: ") + e.what());
  }

  CompileCache cache(CompileCache::default_dir(options.cache_dir));
  const ShimTier first_tier = options.light_extension_header ? ShimTier::Lite : ShimTier::Full;

  // Everything the artifact and the stored info depend on; temp paths as placeholders.
  if (placeholder.uses_params_header) setup.params_include = "<params>";
  NvccSetup symbolic = setup;
  if (first_tier != ShimTier::Full) symbolic.shim_include = "<shim>";
  const std::string key =
      Sha256()
          .update(kPipelineVersion)
          .update(source)
          .update(placeholder.candidate_suffix)
          .update(placeholder.host_source)
          .update(shell_join(candidate_compile_argv(symbolic, "<src>", "<obj>")))
          .update(shell_join(host_compile_argv(symbolic, "<binding.cpp>", "<binding.o>")))
          .update(shell_join(link_argv(symbolic, {"<obj>", "<binding.o>"}, "<so>")))
          .update(nvcc_identity(setup.nvcc))
          .update(nvcc_identity(resolve_cuobjdump(options.cuobjdump)))
          .update(build::kTorchVersion)
          .update(setup.arch)
          .update(to_string(first_tier))
          .update(extension_shim_text(ShimTier::Lite))
          .update(extension_shim_text(ShimTier::ATen))
          .update(placeholder.uses_params_header ? params_header_text() : "")
          .update(fmt::format("{}|{}|{}", options.display_name, options.max_errors, options.log_limit))
          .hex_digest();

  if (options.use_cache)
    if (auto hit = cache.lookup(key)) return *hit;
  // One builder per key across threads and processes; the others then find its entry.
  auto lock = cache.lock(key);
  if (options.use_cache)
    if (auto hit = cache.lookup(key)) return *hit;

  const Binding binding = generate_binding(spec, source, "kagent_" + key.substr(0, 16));
  if (binding.uses_params_header) setup.params_include = ensure_params_include(cache);
  TempDir staging = cache.make_staging(key);
  const Job job{cache, binding, source, options, limits, staging.path()};
  auto setup_for = [&](ShimTier tier) {
    NvccSetup s = setup;
    if (tier == ShimTier::Full) {
      if (includes_torch_header(source)) s.python_include = python_include_dir();
    } else {
      s.shim_include = ensure_shim(cache, tier);
    }
    return s;
  };
  ShimTier tier = first_tier;
  Attempt a = build_once(job, setup_for(tier));
  double spent = a.info.seconds;
  long peak_mb = a.info.peak_rss_mb;
  std::string notes;
  // A cheaper header that lacked what this file uses: the next tier, at its cost.
  while (!a.info.ok && a.info.limit.empty()) {
    auto next = next_tier(tier, source, a.errors, setup.torch_prefix);
    if (!next) break;
    notes += fmt::format("kagent: rebuilt with the {} torch/extension.h (the {} one lacked what this file uses)\n",
                         to_string(*next), to_string(tier));
    tier = *next;
    a = build_once(job, setup_for(tier));
    spent += a.info.seconds;
    peak_mb = std::max(peak_mb, a.info.peak_rss_mb);
  }
  a.info.seconds = spent;
  a.info.peak_rss_mb = std::max(a.info.peak_rss_mb, peak_mb);
  a.info.log = notes + a.info.log;
  if (!a.cacheable) return a.info;  // timeouts and internal failures may not repeat
  return cache.publish(key, staging, std::move(a.info), /*replace=*/!options.use_cache);
}

}  // namespace kagent
