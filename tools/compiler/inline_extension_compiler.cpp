#include "compiler/inline_extension_compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>

#include <fmt/format.h>

#include "common/sha256.h"
#include "common/switch_value.h"
#include "common/subprocess.h"
#include "compiler/build_steps.h"
#include "compiler/compile_cache.h"
#include "compiler/compile_diagnostics.h"
#include "compiler/extension_shim.h"
#include "compiler/host_pch.h"
#include "compiler/inline_binding.h"
#include "compiler/micro_header.h"
#include "compiler/nvcc_command.h"
#include "compiler/nvcc_split.h"
#include "compiler/prefix_preprocess.h"
#include "compiler/ptxas_resources.h"
#include "compiler/shared_binding.h"
#include "compiler/binding_declarations.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {

constexpr std::string_view kPipelineVersion = "kagent-inline-3";
constexpr std::string_view kPlaceholderNs = "kagent_0000000000000000";
// A fallback to torch's build is cached as a failed build whose errors start with this.
constexpr std::string_view kFallbackMarker = "kagent's build of ";

// "\n".join(head + parts), as load_inline writes its files.
std::string join_lines(std::vector<std::string> head, const std::vector<std::string>& parts) {
  head.insert(head.end(), parts.begin(), parts.end());
  std::string out;
  for (size_t i = 0; i < head.size(); ++i) out += (i ? "\n" : "") + head[i];
  return out;
}

std::vector<std::string> non_empty(const std::vector<std::string>& flags) {
  std::vector<std::string> out;
  for (const auto& f : flags)
    if (!f.empty()) out.push_back(f);
  return out;
}

// What both parts get besides nvcc_command's flags: the extension's name and include paths.
std::vector<std::string> shared_flags(const InlineCall& c) {
  std::vector<std::string> a{"-DTORCH_EXTENSION_NAME=" + c.name, "-DTORCH_API_INCLUDE_EXTENSION_H"};
  for (const auto& p : non_empty(c.extra_include_paths)) a.push_back("-I" + p);
  return a;
}

// extra_cflags go to the host compiler (load_inline gives them to c++ directly).
std::vector<std::string> cpp_argv(const NvccSetup& s, const InlineCall& c, const fs::path& src, const fs::path& obj) {
  auto a = host_compile_argv(s, src, obj);
  for (const auto& f : shared_flags(c)) a.push_back(f);
  for (const auto& f : non_empty(c.extra_cflags)) a.insert(a.end(), {"-Xcompiler", f});
  return a;
}

// extra_ldflags: -l/-L as nvcc takes them, -Wl,x as -Xlinker x, anything else to the host compiler.
std::vector<std::string> so_argv(const NvccSetup& s, const InlineCall& c, const std::vector<fs::path>& objs,
                                 const fs::path& so) {
  auto a = link_argv(s, objs, so);
  for (const auto& f : non_empty(c.extra_ldflags)) {
    if (f.rfind("-l", 0) == 0 || f.rfind("-L", 0) == 0) {
      a.push_back(f);
    } else if (f.rfind("-Wl,", 0) == 0) {
      a.insert(a.end(), {"-Xlinker", f.substr(4)});
    } else {
      a.insert(a.end(), {"-Xcompiler", f});
    }
  }
  return a;
}

struct Part {
  std::string display;  // "<name>/main.cpp" as torch names its files
  std::string text;     // without kagent's binding
  std::string suffix;   // kagent's binding (main.cpp only)
  fs::path src, obj;
};

struct PartResult {
  RunResult run;
  std::vector<Diagnostic> errors;
  std::string shown;
  bool ok = false;
};

// How a part runs: the CUDA part with nvcc's two front ends side by side (nvcc_split.h), in the
// staging folder under the name "cuda.cu" where it uses the precompiled prefix (host_pch.h).
struct PartRun {
  const SplitOptions* split = nullptr;  // null: one process (the C++ part)
  bool in_staging = false;              // run in the staging folder, the file named relatively
};

PartResult compile_part(const Part& p, const std::vector<std::string>& argv, const fs::path& staging,
                        const CompileLimits& limits, const PartRun& how, std::vector<CompileStep>& steps) {
  PartResult r;
  write_text_file(p.src, p.text + p.suffix);
  SpawnOptions so;
  so.argv = argv;
  so.env_set = {"TMPDIR=" + staging.string()};
  if (how.in_staging) so.cwd = staging.string();
  if (how.split) {
    r.run = run_nvcc_split(so, limits, staging / "nvcc", *how.split);
  } else {
    r.run = limits.run(so);
    steps.push_back(step_of(p.src.filename().string() + " host compile", r.run));
  }
  r.ok = r.run.succeeded();
  DiagnosticsContext ctx;
  ctx.display_name = p.display;
  ctx.replacements = {{p.src.string(), p.display}, {staging.string() + "/", ""}};
  if (how.in_staging) {
    const std::string name = p.src.filename().string();
    ctx.replacements.insert(ctx.replacements.end(), {{"\n" + name + "(", "\n" + p.display + "("},
                                                     {"\n" + name + ":", "\n" + p.display + ":"}});
  }
  ctx.source = p.text;
  ctx.user_lines = p.suffix.empty() ? 0 : static_cast<int>(count_lines(p.text));
  // Every line of the output follows a newline here, so the relative name is caught at a line's start.
  const std::string output = "\n" + r.run.output;
  r.shown = "$ " + shell_join(argv) + map_paths(output, ctx);
  if (!r.ok) r.errors = parse_errors(output, ctx);
  return r;
}

struct Attempt {
  InlineBuild build;
  std::vector<Diagnostic> errors;
  bool cacheable = true;
};

// Whether an error sits in the answer's own text (then it is the answer's compile error).
bool in_answer(const Diagnostic& d, const InlineCall& c) {
  return !d.in_binding && (d.file == c.name + "/main.cpp" || d.file == c.name + "/cuda.cu");
}

// The function of `functions=` that an error in kagent's binding says is undeclared, or "".
// torch's main.cpp (cpp_sources, then its bindings) binds the same names, so its build fails
// the same way: the answer's error, not kagent's (CUDA-L1 answers with cpp_sources="" were
// sent to torch's 30 s build only for it to fail).
std::string undeclared_function(const Diagnostic& d, const InlineCall& c) {
  if (!d.in_binding || d.message.find("has not been declared") == std::string::npos) return {};
  for (const auto& f : c.functions) {
    const std::string name = f.substr(f.find('=') + 1);
    if (d.message.find("'::" + name + "'") != std::string::npos) return name;  // quotes made ASCII by parse_errors
  }
  return {};
}

// The errors that sit in the answer's own text, and the functions it names but never declares.
std::vector<Diagnostic> answer_errors(const std::vector<Diagnostic>& errors, const InlineCall& c) {
  std::vector<Diagnostic> own;
  for (const auto& d : errors) {
    if (in_answer(d, c)) {
      own.push_back(d);
    } else if (const std::string name = undeclared_function(d, c); !name.empty()) {
      Diagnostic named;
      named.file = c.name + "/main.cpp";
      named.tool = d.tool;
      named.message = fmt::format(
          "functions= names `{0}`, which cpp_sources does not declare: load_inline binds it in main.cpp (cpp_sources "
          "and then the bindings), so torch's build fails the same way. Declare it in cpp_sources, e.g. "
          "`torch::Tensor {0}(torch::Tensor x);`",
          name);
      own.push_back(std::move(named));
    }
  }
  return own;
}

// The answer's shared object from `objs`, with the call's extra_ldflags (and `more`, kagent's).
RunResult link_library(const NvccSetup& setup, const InlineCall& call, const std::vector<fs::path>& objs,
                       const fs::path& so, const fs::path& staging, const CompileLimits& limits,
                       std::vector<std::string>& argv, const std::vector<std::string>& more = {}) {
  argv = so_argv(setup, call, objs, so);
  argv.insert(argv.end(), more.begin(), more.end());
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.env_set = {"TMPDIR=" + staging.string()};
  return limits.run(spawn);
}

// Whether the call names no folder relative to the working directory: the CUDA part runs in
// the staging folder when it uses the precompiled prefix.
bool paths_absolute(const InlineCall& c) {
  for (const auto& p : c.extra_include_paths)
    if (!p.empty() && !fs::path(p).is_absolute()) return false;
  for (const auto& f : c.extra_cuda_cflags)
    if (f.find("-I") != std::string::npos || f.find("-isystem") != std::string::npos ||
        f.find("include-path") != std::string::npos || f.find("-include") != std::string::npos)
      return false;  // a folder or file in a flag: kept where it was written for
  return true;
}

// A precompiled header is built once per machine and toolchain, under limits of its own: the
// whole timeout from now, whatever the answer's build has used.
CompileLimits pch_limits_from(const CompileLimits& limits) {
  CompileLimits l = limits;
  l.deadline = std::chrono::steady_clock::now() + limits.timeout;
  return l;
}

// The first header tier of an extension's build (and of its precompiled headers).
ShimTier first_inline_tier(const CompileOptions& options) {
  return options.light_extension_header ? first_light_tier(true) : ShimTier::Full;
}

bool uses_shared_binding(const CompileOptions& o) {
  if (o.shared_binding) return *o.shared_binding;
  // Read once per process: the switch is for a whole run, and a bad value is said once.
  static const bool on = environment_switch(kSharedBindingEnv, true);
  return on;
}

bool micro_wanted(const CompileOptions& o) { return o.micro_header ? *o.micro_header : micro_header_enabled(); }

// Whether the answer is tried with the micro header first: Slim would be first, main.cpp can be
// the shared binding (cuda.cu alone sees the micro header) and no file includes another torch
// header (it would declare a second at::Tensor).
// `sources`: both files as load_inline writes them; `declarations`: shared_declarations' text.
bool micro_applies(const InlineCall& call, const std::string& sources, const std::string& declarations,
                   const CompileOptions& o, ShimTier first) {
  return first == ShimTier::Slim && micro_wanted(o) && uses_shared_binding(o) && !call.cuda_sources.empty() &&
         !declarations.empty() && includes_only_shimmed_torch_headers(sources);
}

// What prefix_preprocess needs for one of the CUDA part's preprocessor runs.
PrefixPreprocessRequest preprocess_request(const CompileCache& cache, const NvccSetup& setup, const fs::path& staging,
                                           const CompileLimits& limits, const CompileLimits& pch_limits,
                                           const std::string& command, const std::vector<std::string>& environment,
                                           const std::string& text, std::vector<CompileStep>* steps) {
  PrefixPreprocessRequest r;
  r.cache = &cache;
  r.command = command;
  r.environment = environment;
  r.source_text = text;
  r.toolchain = compilers_identity(setup.nvcc);
  r.spawn.env_set = {"TMPDIR=" + staging.string()};
  r.limits = limits;
  r.prefix_limits = pch_limits;
  r.steps = steps;
  return r;
}

bool uses_prefix_preprocess() {
  // Read once per process, as KAGENT_SHARED_BINDING: the switch is for a whole run.
  static const bool on = environment_switch(kPrefixPreprocessEnv, true);
  return on;
}

// The CUDA part: nvcc's two front ends side by side (nvcc_split.h), with the precompiled
// prefix of the implicit headers (host_pch.h) when `pch` and the file starts with them.
PartResult compile_cuda_part(const InlineCall& call, const Part& cuda, const NvccSetup& setup, const fs::path& staging,
                             const CompileLimits& limits, const CompileLimits& pch_limits, const CompileCache& cache,
                             bool pch, std::vector<std::string>& cmd, std::vector<CompileStep>& steps) {
  const bool prefix = pch && inline_cuda_text(call).rfind(kCudaImplicitHeaders, 0) == 0 && paths_absolute(call);
  SplitOptions split;
  split.steps = &steps;
  split.label = "cuda.cu";
  PartRun how{&split, false};
  if (prefix) {
    // cudafe++'s output starts as the prefix's only when the file has the same name and id. The
    // prefix is built (once per machine) only when the host compile needs it, so that the first
    // compiles' front ends run meanwhile instead of waiting for it; the hook runs after both
    // front ends, when no other step records into `steps`.
    split.module_id = cuda_prefix_module_id(setup);
    split.before_host_compile = [&](HostCompile& hc) {
      if (const auto built = ensure_cuda_part_pch(cache, setup, pch_limits, &steps)) use_cuda_prefix(hc.source, *built);
    };
    // Both preprocessor runs expand the implicit headers from their prefix (prefix_preprocess.h).
    if (uses_prefix_preprocess()) {
      split.preprocess = [&, text = cuda.text + cuda.suffix](const std::string& command,
                                                            const std::vector<std::string>& environment,
                                                            std::vector<CompileStep>& ran) {
        return preprocess_after_prefix(
            preprocess_request(cache, setup, staging, limits, pch_limits, command, environment, text, &ran));
      };
    }
    how.in_staging = true;
    cmd = inline_cuda_argv(setup, call, cuda.src.filename(), cuda.obj.filename());
  } else {
    cmd = inline_cuda_argv(setup, call, cuda.src, cuda.obj);
  }
  return compile_part(cuda, cmd, staging, limits, how, steps);
}

// The shared binding for `declarations`: main.cpp as load_inline writes it for them, under a
// fixed name (the declarations do not name the extension, binding_declarations.h), compiled with
// the tier's precompiled header where it builds; its steps go to `steps`.
SharedBindingRequest binding_request(const InlineCall& call, const std::string& declarations, const NvccSetup& setup,
                                     const CompileCache& cache, ShimTier tier, const CompileLimits& pch_limits,
                                     std::vector<CompileStep>& steps) {
  InlineCall shared = call;
  shared.name = "kagent_binding";
  shared.cpp_sources = {declarations};
  SharedBindingRequest r;
  r.source = inline_cpp_text(shared) + shared_binding_suffix(call.functions.size());
  r.slots = call.functions.size();
  r.compile = [setup, shared](const fs::path& src, const fs::path& obj) { return cpp_argv(setup, shared, src, obj); };
  r.speedups = [&cache, &steps, setup, tier, pch_limits]() -> std::vector<std::string> {
    if (const auto header = ensure_cpp_part_pch(cache, setup, tier, pch_limits, &steps))
      return {"-Xcompiler", "-include," + header->string()};
    return {};
  };
  r.link = [setup](const fs::path& obj, const fs::path& so) { return link_argv(setup, {obj}, so); };
  Sha256 toolchain;
  hash_toolchain(toolchain, setup.nvcc, setup.arch, tier);
  r.toolchain = toolchain.hex_digest();
  return r;
}

// main.cpp as a binding shared with every answer that declares the same functions
// (shared_binding.h): only cuda.cu is compiled, with a getter per function, while the binding
// comes from the cache (or is built beside it, once per key). nullopt where the binding does
// not build, cuda.cu fails outside the answer's code, or cuda.cu does not define what the
// declarations declare: the caller then builds main.cpp as before, so that every such case
// ends as it did. `spent`: the steps of this attempt, for the caller's record either way.
// With the micro header (`tier` Micro) cuda.cu sees no torch header and its library links the
// micro support library; the binding is the slim tier's, as for every other answer.
std::optional<Attempt> build_with_shared_binding(const InlineCall& call, const std::string& declarations,
                                                 const NvccSetup& setup, const fs::path& staging, const std::string& ns,
                                                 const CompileOptions& options, const CompileLimits& limits,
                                                 const CompileCache& cache, ShimTier tier,
                                                 std::vector<CompileStep>& spent) {
  const auto t0 = std::chrono::steady_clock::now();
  const CompileLimits pch_limits = pch_limits_from(limits);
  std::vector<CompileStep> bind_steps, cu_steps;
  const bool micro = tier == ShimTier::Micro;
  const ShimTier binding_tier = micro ? first_light_tier(true) : tier;
  const NvccSetup binding_setup = micro ? setup_for_tier(setup, binding_tier, cache, /*needs_python=*/true) : setup;
  const SharedBindingRequest request =
      binding_request(call, declarations, binding_setup, cache, binding_tier, pch_limits, bind_steps);
  // A binding known not to build: main.cpp as before, without compiling cuda.cu twice.
  if (const auto known = lookup_shared_binding(cache, request); known && !*known) return std::nullopt;
  auto binding_future = std::async(std::launch::async, [&] { return ensure_shared_binding(cache, request, pch_limits, &bind_steps); });
  std::optional<fs::path> support;
  if (micro) {
    NvccSetup base = setup;
    base.shim_include.clear();
    support = ensure_micro_support(cache, base, pch_limits, &cu_steps);
    if (!support) {  // no micro tier on this machine: the next tier builds the answer
      binding_future.get();
      spent = cu_steps;
      spent.insert(spent.end(), bind_steps.begin(), bind_steps.end());
      return std::nullopt;
    }
  }
  Part cuda{call.name + "/cuda.cu", inline_cuda_text(call), function_getters(call.functions), staging / "cuda.cu",
            staging / "cuda.o"};
  std::vector<std::string> cu_cmd;
  PartResult cu = compile_cuda_part(call, cuda, setup, staging, limits, pch_limits, cache, true, cu_cmd, cu_steps);
  const std::optional<SharedBinding> binding = binding_future.get();
  spent = cu_steps;
  spent.insert(spent.end(), bind_steps.begin(), bind_steps.end());

  Attempt a;
  CompileInfo& info = a.build.info;
  info.steps = spent;
  info.op_name = ns;
  info.command = shell_join(cu_cmd);
  info.limit = limits.hit(cu.run);
  info.peak_rss_mb = cu.run.exit.peak_rss_kb / 1024;
  info.resources = parse_ptxas_resources(cu.run.output);
  auto finish = [&](std::string shown) {
    info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    info.log = cut_log(shown, options.log_limit);
    return std::optional<Attempt>(std::move(a));
  };
  if (!info.limit.empty()) {  // the answer's build ran into a limit: as build_once reports it
    a.cacheable = false;
    info.errors = limits.describe(info.limit);
    return finish(cu.shown);
  }
  if (!cu.ok) {
    const std::vector<Diagnostic> own = answer_errors(cu.errors, call);
    if (own.empty() || !binding) return std::nullopt;  // not the answer's own errors, or main.cpp's are unknown
    a.errors = cu.errors;
    info.errors = format_errors(own, options.max_errors);
    return finish(cu.shown);
  }
  if (!binding) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& f : call.functions) names.push_back(f.substr(f.find('=') + 1));
  const auto symbols = object_symbols(cuda.obj, limits);
  if (!symbols || !first_undefined(*symbols, names, binding->suffixes).empty()) return std::nullopt;

  const fs::path so = staging / (ns + ".so");
  std::vector<std::string> la;
  const RunResult linked =
      link_library(setup, call, {cuda.obj}, so, staging, limits, la, support ? micro_link_flags(*support) : std::vector<std::string>{});
  spent.push_back(step_of("link", linked));
  if (!linked.succeeded()) return std::nullopt;
  auto place = [&staging](const fs::path& from, const fs::path& name) {
    std::error_code ec;
    fs::create_hard_link(from, staging / name, ec);
    if (ec) fs::copy_file(from, staging / name);
  };
  place(binding->library, kSharedBindingFile);
  if (support) place(*support, support->filename());  // found through $ORIGIN
  info.steps = spent;
  info.ok = true;
  info.artifact = so.string();
  info.command += " && " + shell_join(la);
  info.peak_rss_mb = std::max(info.peak_rss_mb, linked.exit.peak_rss_kb / 1024);
  return finish(fmt::format("kagent: main.cpp is the binding shared by answers that declare the same functions "
                            "(key {}, {})\n{}\n$ {}\n{}",
                            binding->key.substr(0, 16), binding->built_now ? "built now" : "cached", cu.shown,
                            shell_join(la), linked.output));
}

// `pch`: use the precompiled host headers (host_pch.h), building them first when missing.
// `declarations`: cpp_sources as the shared binding's key (binding_declarations.h), or "".
Attempt build_once(const InlineCall& call, const std::string& declarations, const NvccSetup& setup,
                   const fs::path& staging, const std::string& ns, const CompileOptions& options,
                   const CompileLimits& limits, const CompileCache& cache, ShimTier tier, bool pch) {
  std::vector<CompileStep> spent;  // of a shared-binding attempt that did not hold
  // Micro is only tried where the shared binding can be (micro_applies).
  if (tier == ShimTier::Micro ||
      (pch && uses_shared_binding(options) && !call.cuda_sources.empty() && !declarations.empty()))
    if (auto fast = build_with_shared_binding(call, declarations, setup, staging, ns, options, limits, cache, tier,
                                              spent))
      return std::move(*fast);
  if (tier == ShimTier::Micro) {
    // An attempt that did not hold is a failed build with no errors of its own: build_over_tiers
    // moves on to the next tier.
    Attempt a;
    a.build.info.steps = std::move(spent);
    a.build.info.op_name = ns;
    return a;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Part cpp{call.name + "/main.cpp", inline_cpp_text(call), inline_binding_suffix(call.functions, ns),
           staging / "main.cpp", staging / "main.o"};
  std::optional<Part> cuda;
  if (!call.cuda_sources.empty())
    cuda = Part{call.name + "/cuda.cu", inline_cuda_text(call), "", staging / "cuda.cu", staging / "cuda.o"};
  const CompileLimits pch_limits = pch_limits_from(limits);

  Attempt a;
  CompileInfo& info = a.build.info;
  std::vector<CompileStep> cpp_steps, cu_steps;
  std::vector<std::string> cpp_cmd;
  auto cpp_future = std::async(std::launch::async, [&] {
    cpp_cmd = cpp_argv(setup, call, cpp.src, cpp.obj);
    if (pch)
      if (const auto header = ensure_cpp_part_pch(cache, setup, tier, pch_limits, &cpp_steps))
        cpp_cmd.insert(cpp_cmd.end(), {"-Xcompiler", "-include," + header->string()});
    return compile_part(cpp, cpp_cmd, staging, limits, PartRun{}, cpp_steps);
  });
  std::optional<PartResult> cu;
  std::vector<std::string> cu_cmd;
  if (cuda) cu = compile_cuda_part(call, *cuda, setup, staging, limits, pch_limits, cache, pch, cu_cmd, cu_steps);
  PartResult cp = cpp_future.get();
  info.steps = std::move(spent);
  info.steps.insert(info.steps.end(), cu_steps.begin(), cu_steps.end());
  info.steps.insert(info.steps.end(), cpp_steps.begin(), cpp_steps.end());

  std::string shown = cu ? cu->shown + "\n" + cp.shown : cp.shown;
  info.command = cu ? shell_join(cu_cmd) + " & " + shell_join(cpp_cmd) : shell_join(cpp_cmd);
  info.limit = limits.hit(cp.run);
  if (info.limit.empty() && cu) info.limit = limits.hit(cu->run);
  long peak_kb = std::max(cp.run.exit.peak_rss_kb, cu ? cu->run.exit.peak_rss_kb : 0L);
  bool ok = cp.ok && (!cu || cu->ok);
  std::string link_output;
  if (ok) {
    std::vector<fs::path> objs{cpp.obj};
    if (cuda) objs.push_back(cuda->obj);
    const fs::path so = staging / (ns + ".so");
    std::vector<std::string> la;
    const RunResult linked = link_library(setup, call, objs, so, staging, limits, la);
    info.steps.push_back(step_of("link", linked));
    shown += "\n$ " + shell_join(la) + "\n" + linked.output;
    info.command += " && " + shell_join(la);
    ok = linked.succeeded();
    if (ok) info.artifact = so.string();
    else link_output = linked.output;
    info.limit = limits.hit(linked);
    peak_kb = std::max(peak_kb, linked.exit.peak_rss_kb);
  }
  info.peak_rss_mb = peak_kb / 1024;
  info.ok = ok;
  info.op_name = ns;
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  info.log = cut_log(shown, options.log_limit);
  if (cu) info.resources = parse_ptxas_resources(cu->run.output);
  if (ok) return a;
  if (!info.limit.empty()) {  // the answer's build ran into a limit (torch's would too): its compile error
    a.cacheable = false;       // a limit's verdict depends on the limit and the machine's load
    info.errors = limits.describe(info.limit);
    return a;
  }
  if (cu) a.errors = cu->errors;
  a.errors.insert(a.errors.end(), cp.errors.begin(), cp.errors.end());
  const std::vector<Diagnostic> own = answer_errors(a.errors, call);
  if (!own.empty()) {
    info.errors = format_errors(own, options.max_errors);
  } else {
    const std::string why = !a.errors.empty() ? a.errors.front().message
                            : !link_output.empty() ? "the link failed"
                                                   : "the build failed with no error kagent recognised";
    a.build.fallback = fmt::format("{}{} failed outside the answer's own code: {}", kFallbackMarker, call.name,
                                   why.substr(0, why.find('\n')));
    info.errors = a.build.fallback;
  }
  return a;
}

// The shared binding beside a built library, or "".
std::string shared_binding_of(const CompileInfo& info) {
  if (!info.ok || info.artifact.empty()) return {};
  const fs::path p = fs::path(info.artifact).parent_path() / kSharedBindingFile;
  return fs::exists(p) ? p.string() : std::string();
}

}  // namespace

void from_json(const nlohmann::json& j, InlineCall& c) {
  c = InlineCall{};
  c.key = j.at("key").get<std::string>();
  const auto& call = j.at("call");
  c.name = call.at("name").get<std::string>();
  auto list = [&](const char* k, std::vector<std::string>& out) {
    if (call.contains(k)) out = call.at(k).get<std::vector<std::string>>();
  };
  list("cpp_sources", c.cpp_sources);
  list("cuda_sources", c.cuda_sources);
  list("functions", c.functions);
  list("extra_cflags", c.extra_cflags);
  list("extra_cuda_cflags", c.extra_cuda_cflags);
  list("extra_ldflags", c.extra_ldflags);
  list("extra_include_paths", c.extra_include_paths);
  c.no_implicit_headers = call.value("no_implicit_headers", false);
}

std::string inline_cpp_text(const InlineCall& call) {
  std::vector<std::string> head;
  if (!call.no_implicit_headers) head.push_back("#include <torch/extension.h>");
  return join_lines(head, call.cpp_sources) + "\n";
}

std::vector<std::string> inline_cuda_argv(const NvccSetup& s, const InlineCall& c, const fs::path& src,
                                          const fs::path& obj) {
  NvccSetup with = s;
  with.extra_flags = shared_flags(c);
  for (const auto& f : non_empty(c.extra_cuda_cflags)) with.extra_flags.push_back(f);
  return candidate_compile_argv(with, src, obj);
}

std::string inline_cuda_text(const InlineCall& call) {
  std::vector<std::string> head;
  if (!call.no_implicit_headers) head = {"#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"};
  return join_lines(head, call.cuda_sources) + "\n";
}

namespace {

// The preprocessor prefixes (prefix_preprocess.h) of an answer without extra flags: nvcc's
// two preprocessor lines for such an answer's cuda.cu, read from its -dryrun, built side by side.
void prepare_preprocess_prefixes(const CompileCache& cache, const NvccSetup& setup, const CompileLimits& limits) {
  if (!uses_prefix_preprocess()) return;
  InlineCall call;
  call.name = "kagent_prepare";
  TempDir dir = cache.make_staging("prepare-preprocess");
  write_text_file(dir.path() / "cuda.cu", kCudaImplicitHeaders);
  SpawnOptions so;
  so.argv = inline_cuda_argv(setup, call, "cuda.cu", "cuda.o");
  so.argv.insert(so.argv.end(), {"-dryrun", "--keep", "--keep-dir", (dir.path() / "nvcc").string()});
  so.cwd = dir.path().string();
  const RunResult plan = limits.run(so);
  const auto steps = plan.succeeded() ? parse_nvcc_dryrun(plan.output) : std::nullopt;
  if (!steps || steps->device.empty()) return;
  auto build = [&](const std::string& command) {
    (void)ensure_preprocess_prefix(preprocess_request(cache, setup, dir.path(), limits, limits, command,
                                                      steps->environment, std::string(kCudaImplicitHeaders), nullptr));
  };
  auto device = std::async(std::launch::async, build, steps->device.front());
  build(steps->host.front());
  device.get();
}

}  // namespace

void prepare_inline_headers(const CompileOptions& options) {
  const ShimTier tier = first_inline_tier(options);
  if (tier == ShimTier::Full) return;  // the real header is never precompiled
  try {
    const CompileLimits pch_limits = pch_limits_from(resolve_compile_limits(options));
    CompileCache cache(CompileCache::default_dir(options.cache_dir));
    // The same setup build_once gives the first tier, so the same keys.
    const NvccSetup setup = setup_for_tier(base_setup(options), tier, cache, /*needs_python=*/true);
    auto cpp = std::async(std::launch::async, [&] { (void)ensure_cpp_part_pch(cache, setup, tier, pch_limits, nullptr); });
    auto pre = std::async(std::launch::async, [&] { prepare_preprocess_prefixes(cache, setup, pch_limits); });
    // The micro tier's support library and prefixes, which most answers' first compile uses.
    std::future<void> micro;
    if (tier == ShimTier::Slim && micro_wanted(options) && uses_shared_binding(options))
      micro = std::async(std::launch::async, [&] {
        const NvccSetup base = base_setup(options);
        (void)ensure_micro_support(cache, base, pch_limits, nullptr);
        const NvccSetup micro_setup = setup_for_tier(base, ShimTier::Micro, cache, /*needs_python=*/true);
        prepare_preprocess_prefixes(cache, micro_setup, pch_limits);
        (void)ensure_cuda_part_pch(cache, micro_setup, pch_limits, nullptr);
      });
    (void)ensure_cuda_part_pch(cache, setup, pch_limits, nullptr);
    cpp.get();
    pre.get();
    if (micro.valid()) micro.get();
  } catch (const std::exception&) {
    // best effort (see the header)
  }
}

InlineBuild compile_inline_extension(const InlineCall& call, const CompileOptions& options) {
  NvccSetup setup;
  CompileLimits limits;
  try {
    limits = resolve_compile_limits(options);
    setup = base_setup(options);
  } catch (const std::invalid_argument& e) {
    InlineBuild b;
    b.fallback = std::string("kagent cannot build for this target: ") + e.what();
    return b;
  }
  CompileCache cache(CompileCache::default_dir(options.cache_dir));
  // Answers mostly use Tensor's methods and a few factories (empty, zeros_like): Micro first where
  // it can hold, else Slim.
  const std::string all_sources = inline_cpp_text(call) + inline_cuda_text(call);
  const std::string declarations = shared_declarations(call.cpp_sources, call.functions).text;
  const ShimTier light_tier = first_inline_tier(options);
  const ShimTier first_tier =
      micro_applies(call, all_sources, declarations, options, light_tier) ? ShimTier::Micro : light_tier;
  // A function of the sources (in the key already), as the tiers are; only micro answers have one.
  const MicroStd micro_std =
      first_tier == ShimTier::Micro && (micro_full_std_forced() || micro_needs_full_std(inline_cuda_text(call)))
          ? MicroStd::Full
          : MicroStd::Lean;
  NvccSetup symbolic = setup;
  if (first_tier != ShimTier::Full) symbolic.shim_include = "<shim>";
  Sha256 h;
  h.update(kPipelineVersion)
      .update(inline_cpp_text(call))
      .update(inline_binding_suffix(call.functions, kPlaceholderNs))
      .update(inline_cuda_text(call))
      .update(shell_join(cpp_argv(symbolic, call, "<src>", "<obj>")))
      .update(shell_join(inline_cuda_argv(symbolic, call, "<src>", "<obj>")))
      .update(shell_join(so_argv(symbolic, call, {"<obj>"}, "<so>")))
      .update(fmt::format("{}|{}|{}", options.max_errors, options.log_limit, uses_shared_binding(options)));
  hash_toolchain(h, setup.nvcc, setup.arch, first_tier);
  const std::string key = h.hex_digest();
  auto from_cache = [&](CompileInfo info) {
    InlineBuild b;
    if (!info.ok && info.errors.rfind(kFallbackMarker, 0) == 0) b.fallback = info.errors;
    b.binding = shared_binding_of(info);
    b.info = std::move(info);
    return b;
  };
  if (options.use_cache)
    if (auto hit = cache.lookup(key)) return from_cache(*hit);
  auto lock = cache.lock(key);
  if (options.use_cache)
    if (auto hit = cache.lookup(key)) return from_cache(*hit);

  const std::string ns = "kagent_" + key.substr(0, 16);
  TempDir staging = cache.make_staging(key);
  // cacheable is false exactly when a limit was hit, where the tiers stop too.
  Attempt a = build_over_tiers(
      first_tier, all_sources, setup.torch_prefix,
      [&](ShimTier tier) {
        // Only the first light tier's headers are precompiled (and Micro's, before it): the others
        // serve few answers.
        return build_once(call, declarations, setup_for_tier(setup, tier, cache, /*needs_python=*/true, micro_std),
                          staging.path(), ns, options, limits, cache, tier,
                          (tier == first_tier || tier == light_tier) && tier != ShimTier::Full);
      },
      [](Attempt& at) -> CompileInfo& { return at.build.info; });
  if (!a.cacheable) return a.build;
  InlineBuild out;
  out.fallback = a.build.fallback;
  out.info = cache.publish(key, staging, std::move(a.build.info), /*replace=*/!options.use_cache);
  out.binding = shared_binding_of(out.info);
  return out;
}

}  // namespace kagent
