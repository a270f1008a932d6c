#include "cli/eval_command.h"

#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "common/files.h"
#include "common/paths.h"
#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"
#include "problem/spec_cache.h"
#include "result/eval_report.h"
#include "result/exit_status.h"
#include "worker/client/worker_client.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct EvalArgs {
  std::string problem, candidate, format, arch, cache_dir;
  bool json = false, no_timing = false, no_baselines = false, no_compile_baseline = false, no_compile_cache = false;
  int trials = 5;
  int64_t seed = 42;
  std::optional<double> atol, rtol;
  double timeout_s = 180;
  std::optional<int> gpu;
};

// Prints the result the way the user asked, returns its exit status.
int finish(const EvalArgs& a, EvalResult r, const std::string& title, double started_s) {
  r.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() - started_s;
  int code = exit_status::for_result(r);
  if (a.json) {
    nlohmann::json j = r;
    j["exit_status"] = code;
    std::cout << j.dump(2) << std::endl;
  } else {
    std::cout << render_eval_report(r, title);
  }
  return code;
}

int fail_line(const EvalArgs& a, int code, const std::string& line, EvalResult r) {
  std::cerr << "kagent eval: " << line << "\n";
  if (a.json) {
    nlohmann::json j = r;
    j["exit_status"] = code;
    std::cout << j.dump(2) << std::endl;
  }
  return code;
}

int run_eval(const EvalArgs& a) {
  const double started_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  EvalResult r;
  r.format = a.format;
  for (const auto& path : {a.problem, a.candidate}) {
    if (!fs::is_regular_file(path)) {
      r.status = Status::ProblemError;
      r.reason = reason::kFileNotFound;
      r.message = "no such file: " + path;
      return fail_line(a, exit_status::kFileNotFound, r.message, r);
    }
  }
  const std::string problem = fs::absolute(a.problem).string();
  const std::string candidate_path = fs::absolute(a.candidate).string();
  const std::string format = a.format.empty() ? (fs::path(a.candidate).extension() == ".py" ? "kernelbench" : "cuda") : a.format;
  r.format = format;

  WorkerOptions wo;
  wo.gpu = a.gpu;
  wo.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout_s * 1000));
  WorkerClient worker(wo);
  const std::string cache = a.cache_dir.empty() ? cache_root() : a.cache_dir;

  // A known problem's spec is on disk: compile while the worker starts (it imports torch
  // and initialises CUDA, seconds that would otherwise come before nvcc's).
  std::optional<ProblemSpec> cached = load_cached_spec(cache, problem);
  std::future<std::variant<nlohmann::json, WorkerError>> started;
  ProblemSpec spec;
  if (cached) {
    spec = *cached;
    started = std::async(std::launch::async, [&worker, &problem] {
      auto hello = worker.hello();
      if (std::holds_alternative<nlohmann::json>(hello)) worker.prepare(problem);
      return hello;
    });
  } else {
    auto spec_or = worker.load_problem(problem);
    if (auto* err = std::get_if<WorkerError>(&spec_or)) {
      r.status = err->kind == "worker_start" ? Status::InternalError : Status::ProblemError;
      r.reason = problem_error_reason(err->kind);
      r.message = err->message;
      int code = exit_status::for_result(r);
      std::string line = r.status == Status::InternalError ? "cannot start the worker: " + err->message
                                                           : "cannot load problem " + a.problem + ": " + err->message;
      return fail_line(a, code, line, r);
    }
    spec = std::get<ProblemSpec>(spec_or);
    store_cached_spec(cache, spec);
  }
  const std::string title = fmt::format("{} <- {} ({})", spec.name, fs::path(a.candidate).filename().string(), format);
  // The GPU's architecture: the worker's answer when there is one, else the last one seen.
  const fs::path device_file = fs::path(cache) / fmt::format("device-{}.json", a.gpu.value_or(0));
  auto device_of = [&](std::variant<nlohmann::json, WorkerError> hello) -> std::optional<nlohmann::json> {
    if (auto* err = std::get_if<WorkerError>(&hello)) {
      fail_line(a, exit_status::kInternal, "cannot start the worker: " + err->message, r);
      return std::nullopt;
    }
    auto d = std::get<nlohmann::json>(hello);
    try {
      write_file_atomic(device_file, d.dump());
    } catch (const std::exception&) {
      // only a hint for the next run's nvcc target
    }
    return d;
  };
  nlohmann::json device;
  std::future<void> prepared;  // first sight of the problem: warm the worker while nvcc runs
  if (!started.valid()) {
    auto d = device_of(worker.hello());
    if (!d) return exit_status::kInternal;
    device = *d;
    prepared = std::async(std::launch::async, [&worker, &problem] { worker.prepare(problem); });
  } else {
    device = fs::exists(device_file) ? nlohmann::json::parse(read_file(device_file), nullptr, false) : nlohmann::json();
  }
  auto arch_of = [&](const nlohmann::json& d) {
    if (!a.arch.empty()) return a.arch;
    if (d.is_object() && d.value("available", false))
      return arch_for_compute_capability(d["compute_capability"][0].get<int>(), d["compute_capability"][1].get<int>());
    return CompileOptions{}.arch;
  };

  auto compile = [&](const std::string& arch) {
    CompileOptions co;
    co.display_name = fs::path(a.candidate).filename().string();
    co.arch = arch;
    co.use_cache = !a.no_compile_cache;
    if (!a.cache_dir.empty()) co.cache_dir = (fs::path(a.cache_dir) / "compile").string();
    return compile_native(spec, read_file(candidate_path), co);
  };
  std::optional<CompileInfo> ci;
  std::string arch = arch_of(device);
  if (format == "cuda") {
    try {
      ci = compile(arch);
    } catch (const std::invalid_argument& e) {  // a problem a native candidate cannot express
      r.status = Status::Invalid;
      r.message = e.what();
      return fail_line(a, exit_status::kInvalidCandidate, r.message, r);
    }
  }
  if (prepared.valid()) prepared.get();
  if (started.valid()) {
    auto d = device_of(started.get());
    if (!d) return exit_status::kInternal;
    device = *d;
    // A different GPU than last time: build again for the one that is there.
    if (ci && ci->ok && arch_of(device) != arch) ci = compile(arch_of(device));
  }
  r.device = device;

  CandidateRef cand{format, {}, {}, candidate_path};
  if (ci) {
    r.compile = *ci;
    if (!ci->ok) {
      r.status = ci->reason.empty() ? Status::CompileError : Status::Invalid;
      r.reason = ci->reason;
      r.message = ci->reason == reason::kMissingForward     ? "the candidate defines no forward function"
                  : ci->reason == reason::kSignatureMismatch ? "forward does not have the signature the problem needs"
                                                             : "nvcc failed";
      if (!a.json) std::cerr << "kagent eval: " << r.message << "\n";
      return finish(a, r, title, started_s);
    }
    cand.artifact = ci->artifact;
    cand.op_name = ci->op_name;
  }

  nlohmann::json options = {{"trials", a.trials},
                            {"seed", a.seed},
                            {"measure", !a.no_timing},
                            {"eager_baseline", !a.no_baselines},
                            {"compiled_baseline", !a.no_baselines && !a.no_compile_baseline},
                            {"cache_dir", cache}};
  if (a.atol) options["atol"] = *a.atol;
  if (a.rtol) options["rtol"] = *a.rtol;
  EvalResult got = worker.evaluate(problem, cand, options);
  if (r.compile) got.compile = r.compile;
  if (got.reason == reason::kNoGpu)
    std::cerr << "kagent eval: no CUDA device visible" << (r.compile ? " (the candidate compiled)" : "")
              << "; cannot evaluate\n";
  return finish(a, got, title, started_s);
}

}  // namespace

Command add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate one candidate against a problem: compile, check, time");
  sub->add_option("problem", args->problem, "KernelBench problem file (Model, get_inputs, get_init_inputs)")->required();
  sub->add_option("candidate", args->candidate, "candidate: a .cu file (cuda) or a ModelNew .py file (kernelbench)")
      ->required();
  sub->add_option("--format", args->format, "cuda | kernelbench (default: from the file extension)")
      ->check(CLI::IsMember({"cuda", "kernelbench"}));
  sub->add_flag("--json", args->json, "print the full result as JSON");
  sub->add_option("--arch", args->arch, "nvcc target, e.g. sm_90a (default: the worker GPU's own)");
  sub->add_option("--trials", args->trials, "correctness trials with fresh inputs (default 5)")->check(CLI::Range(1, 1000));
  sub->add_option("--seed", args->seed, "seed for weights and inputs (default 42)");
  sub->add_option("--atol", args->atol, "absolute tolerance for every dtype (default per dtype)");
  sub->add_option("--rtol", args->rtol, "relative tolerance for every dtype (default per dtype)");
  sub->add_flag("--no-timing", args->no_timing, "check correctness only");
  sub->add_flag("--no-baselines", args->no_baselines, "do not time eager or torch.compile");
  sub->add_flag("--no-compile-baseline", args->no_compile_baseline, "do not time torch.compile");
  sub->add_option("--timeout", args->timeout_s, "seconds before a hanging evaluation is killed (default 180)");
  sub->add_option("--gpu", args->gpu, "GPU index for the worker (CUDA_VISIBLE_DEVICES)");
  sub->add_option("--cache-dir", args->cache_dir, "cache folder for compiled candidates, specs and baselines");
  sub->add_flag("--no-compile-cache", args->no_compile_cache, "compile even when a cached build exists");
  return {sub, [args] { return run_eval(*args); }};
}

}  // namespace kagent::cli
