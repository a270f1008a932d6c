#include "cli/eval_command.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/errors.h"
#include "cli/eval_flags.h"
#include "cli/progress.h"
#include "cli/flag_checks.h"
#include "cli/input_files.h"
#include "common/files.h"
#include "common/utf8.h"
#include "evaluation/evaluation_session.h"
#include "result/eval_report.h"
#include "result/exit_status.h"
#include "sandbox/sandbox_section.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct EvalArgs {
  std::string problem, candidate, format;
  bool json = false, verbose = false;
  EvalFlags eval;
};

// Prints the result the way the user asked, returns its exit status. The mode the model
// was evaluated in (training/eval, what it changes) is stated with it.
int finish(const EvalArgs& a, EvalResult r, const std::string& title, const ProblemSpec& spec, double started_s) {
  r.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() - started_s;
  int code = exit_status::for_result(r);
  const std::string mode = mode_summary(spec);
  // A property no mechanism held in the worker that ran the candidate: said, whatever the verdict.
  if (const auto unheld = sandbox::unheld_properties(r.sandbox); !unheld.empty()) {
    std::string what;
    for (const auto& p : unheld)
      what += fmt::format("{}{} ({})", what.empty() ? "" : "; ", p, r.sandbox["properties"][p].value("why", ""));
    print_warning("eval", "the sandbox held no mechanism for: " + what);
  }
  if (a.json) {
    nlohmann::json j = r;
    j["exit_status"] = code;
    if (spec.training) j["model_mode"] = {{"training", *spec.training}, {"mode_modules", spec.mode_modules}};
    std::cout << dump_json(j, 2) << std::endl;
  } else {
    std::cout << render_eval_report(r, title, mode.empty() ? std::vector<std::string>{} : std::vector{"model     " + mode}, a.verbose);
  }
  return code;
}

int fail_line(const EvalArgs& a, int code, const std::string& line, EvalResult r) {
  print_error("eval", line);
  if (a.json) {
    nlohmann::json j = r;
    j["exit_status"] = code;
    std::cout << dump_json(j, 2) << std::endl;
  }
  return code;
}

int run_eval(const EvalArgs& a) {
  const double started_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  EvalResult r;
  r.format = a.format;
  // Both files before anything starts (the worker, nvcc): a folder, an empty file, one far
  // larger than any problem or kernel, or bytes that are not text end here, in one line.
  for (const bool is_problem : {true, false}) {
    const std::string& path = is_problem ? a.problem : a.candidate;
    const auto err = check_input_file(path, is_problem ? "problem file" : "candidate", kMaxSourceBytes, /*text=*/true);
    if (!err) continue;
    r.message = err->line;
    if (err->no_file()) {
      r.status = Status::ProblemError;
      r.reason = reason::kFileNotFound;
      return fail_line(a, exit_status::kFileNotFound, r.message, r);
    }
    r.status = is_problem ? Status::ProblemError : Status::Invalid;
    r.reason = is_problem ? reason::kProblemLoad : "";
    return fail_line(a, is_problem ? exit_status::kProblemLoad : exit_status::kInvalidCandidate, r.message, r);
  }
  const std::string problem = fs::absolute(a.problem).string();
  const std::string candidate_path = fs::absolute(a.candidate).string();
  const std::string format = a.format.empty() ? (fs::path(a.candidate).extension() == ".py" ? "kernelbench" : "cuda") : a.format;
  r.format = format;

  // A first run takes minutes (the worker imports torch, nvcc compiles, baselines are timed): it says so.
  const Progress progress("eval", !a.json && Progress::stderr_is_terminal());
  EvaluationSession session(evaluation_settings(a.eval));
  // A KernelBench answer's extensions compile while the worker starts and loads the problem.
  auto prebuilt = session.start_build(candidate_path, format, fs::path(a.candidate).filename().string());
  {
    Progress::Step step(progress, "loading the problem (a worker starts Python and torch, then runs it)");
    if (auto err = session.open(problem))
      return fail_line(a, exit_status::for_result(err->result), err->line, err->result);
    step.done("problem loaded");
  }

  const std::string title =
      fmt::format("{} <- {} ({})", session.spec().name, fs::path(a.candidate).filename().string(), format);
  EvalResult got;
  {
    Progress::Step step(progress, format == "cuda" ? "compiling the candidate (nvcc) and evaluating it on the worker"
                                                   : "evaluating the candidate on the worker");
    got = session.evaluate_file(candidate_path, format, fs::path(a.candidate).filename().string(), std::nullopt,
                                std::move(prebuilt));
    step.done("evaluated");
  }
  if (got.reason == reason::kSandboxUnmet) return fail_line(a, exit_status::kSandboxUnmet, "refused: " + got.message, got);
  if (got.reason == "worker_start")
    return fail_line(a, exit_status::kInternal, "cannot start the worker: " + got.message, got);
  if (got.status == Status::Invalid && !got.compile) return fail_line(a, exit_status::kInvalidCandidate, got.message, got);
  if (got.compile && !got.compile->ok && !a.json) print_error("eval", got.message);
  if (got.reason == reason::kNoGpu)
    print_error("eval", std::string("no CUDA device visible") + (got.compile ? " (the candidate compiled)" : "") +
                            "; cannot evaluate");
  if (const std::string w = shared_gpu_warning(got); !w.empty()) print_warning("eval", w);
  return finish(a, got, title, session.spec(), started_s);
}

}  // namespace

Command add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate one candidate against a problem: compile, check, time");
  sub->add_option("problem", args->problem, "KernelBench problem file (Model, get_inputs, get_init_inputs)")->required();
  sub->add_option("candidate", args->candidate, "candidate: a .cu file (cuda) or a ModelNew .py file (kernelbench)")
      ->required();
  sub->add_option("--format", args->format, "cuda | kernelbench (default: from the file extension)")
      ->check(one_of({"cuda", "kernelbench"}));
  sub->add_flag("--json", args->json, "print the full result as JSON");
  sub->add_flag("-v,--verbose", args->verbose, "also print the evaluation's phases: seconds and peak GPU memory");
  add_eval_flags(*sub, args->eval, /*several_gpus=*/false);
  return {sub, [args] { return run_eval(*args); }};
}

}  // namespace kagent::cli
