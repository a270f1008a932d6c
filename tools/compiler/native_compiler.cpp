#include "compiler/native_compiler.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <future>
#include <optional>

#include <fmt/format.h>

#include "build_info.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "compiler/binding_generator.h"
#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"
#include "compiler/compile_diagnostics.h"
#include "compiler/extension_shim.h"
#include "compiler/nvcc_command.h"
#include "compiler/nvcc_split.h"
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

// The folder holding kagent/params.h, content-addressed inside the cache.
fs::path ensure_params_include(const CompileCache& cache) {
  return ensure_header_folder(cache, "include", params_header_text(), {kParamsHeaderName});
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
                              const CompileLimits& limits) {
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
  write_text_file(src, b.host_source);
  const auto argv = host_compile_argv(setup, src, obj);
  SpawnOptions so;
  so.argv = argv;
  so.env_set = {"TMPDIR=" + tmp.path().string()};
  RunResult r = limits.run(so);
  h.log = "$ " + shell_join(argv) + "\n" + r.output;
  h.limit = limits.hit(r);
  h.peak_rss_kb = r.exit.peak_rss_kb;
  if (!r.succeeded()) return h;
  cache.publish_file(obj, h.object);
  h.ok = true;
  return h;
}

CompileInfo failure(std::string errors) {
  CompileInfo info;
  info.errors = std::move(errors);
  return info;
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
  const CompileLimits& limits;
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
  write_text_file(src, full_source + job.binding.candidate_suffix);

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
    compiled = run_nvcc_split(spawn, job.limits, job.staging / "nvcc");
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
  bool ok = compiled.succeeded();
  if (!host.log.empty()) shown += "\n" + host.log;
  if (ok && host.ok) {
    const auto la = link_argv(setup, {obj, host.object}, so);
    spawn.argv = la;
    RunResult linked = job.limits.run(spawn);
    log += "\n" + linked.output;
    shown += "\n$ " + shell_join(la) + "\n" + map_paths(linked.output, ctx);
    info.command += " && " + shell_join(la);
    ok = linked.succeeded();
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
                            job.options.arch, kDisassemblyTimeout, job.options.cpus);
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
  CompileLimits limits;
  try {
    limits = resolve_compile_limits(options);
    setup = base_setup(options);
    setup.extra_flags = options.extra_flags;
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
  Sha256 h;
  h.update(kPipelineVersion)
      .update(source)
      .update(placeholder.candidate_suffix)
      .update(placeholder.host_source)
      .update(shell_join(candidate_compile_argv(symbolic, "<src>", "<obj>")))
      .update(shell_join(host_compile_argv(symbolic, "<binding.cpp>", "<binding.o>")))
      .update(shell_join(link_argv(symbolic, {"<obj>", "<binding.o>"}, "<so>")))
      .update(placeholder.uses_params_header ? params_header_text() : "")
      .update(fmt::format("{}|{}|{}", options.display_name, options.max_errors, options.log_limit));
  hash_toolchain(h, setup.nvcc, setup.arch, first_tier);
  h.update(nvcc_identity(resolve_cuobjdump(options.cuobjdump)));  // the SASS summary is part of the entry
  const std::string key = h.hex_digest();

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
  const bool needs_python = includes_torch_header(source);
  Attempt a = build_over_tiers(
      first_tier, source, setup.torch_prefix,
      [&](ShimTier tier) { return build_once(job, setup_for_tier(setup, tier, cache, needs_python)); },
      [](Attempt& at) -> CompileInfo& { return at.info; });
  if (!a.cacheable) return a.info;  // timeouts and internal failures may not repeat
  return cache.publish(key, staging, std::move(a.info), /*replace=*/!options.use_cache);
}

}  // namespace kagent
