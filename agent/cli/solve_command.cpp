#include "cli/solve_command.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/errors.h"
#include "cli/eval_flags.h"
#include "cli/flag_checks.h"
#include "cli/input_files.h"
#include "cli/live_view.h"
#include "cli/progress.h"
#include "cli/solve_settings.h"
#include "cli/solve_summary.h"
#include "common/json_optional.h"
#include "common/utf8.h"
#include "evaluation/evaluation_session.h"
#include "llm/cancel.h"
#include "llm/llm_config.h"
#include "llm/replay_client.h"
#include "loop/problem_run.h"
#include "result/eval_report.h"
#include "report/report_writer.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct SolveArgs {
  std::string problem, runs_dir = "runs", resume;
  bool quiet = false, json = false, report = false;
  SolveSettings run;
};

int fail(int code, const std::string& line) {
  print_error("solve", line);
  return code;
}

int run_solve(SolveArgs a) {
  const auto started = std::chrono::steady_clock::now();
  // 1. The run folder, when resuming: its settings replace the defaults.
  std::unique_ptr<traj::RunStore> store;
  if (!a.resume.empty()) {
    if (!fs::is_directory(a.resume)) return fail(solve_exit::kFileNotFound, "no such run folder: " + a.resume);
    if (!fs::exists(fs::path(a.resume) / "config.json"))
      return fail(solve_exit::kNotARun, a.resume + " holds no kagent run (no config.json)");
    try {
      store = traj::RunStore::open(a.resume);
    } catch (const nlohmann::json::exception& e) {
      // The run's records, not kagent, are at fault: name the file (config.json is read first).
      return fail(solve_exit::kNotARun, fmt::format("cannot resume {}: {}: {}", a.resume,
                                                    (fs::path(a.resume) / "config.json").string(), e.what()));
    } catch (const std::exception& e) {
      return fail(solve_exit::kNotARun, fmt::format("cannot resume {}: {}", a.resume, e.what()));
    }
    a.problem = apply_run_config(a.run, store->config(), a.problem);
  }
  // The problem file before the model and the worker: a folder, an empty file, one far larger
  // than any problem or bytes that are not text end here.
  if (const auto err = check_input_file(a.problem, "problem file", kMaxSourceBytes, /*text=*/true))
    return fail(err->no_file() ? solve_exit::kFileNotFound : solve_exit::kProblemLoad, err->line);
  a.problem = fs::absolute(a.problem).string();

  // 2. The model, before any GPU work: a missing key should cost nothing.
  llm::CancelToken cancel, signalled;
  llm::ScopedSignalCancel stop_signals(cancel, &signalled);
  llm::LlmConfig llm_cfg;
  std::unique_ptr<llm::LlmClient> client;
  try {
    llm_cfg = llm::resolve_llm_config(a.run.llm);
    client = llm::make_client(llm_cfg, llm::ClientHooks{&cancel, {}});
    // A new run on a replay of no answers could only run out on its first request, after the
    // worker started and the run folder was made.
    if (const auto* replay = dynamic_cast<const llm::ReplayClient*>(client.get()); replay && replay->size() == 0 && !store)
      return fail(solve_exit::kLlmConfig, "replay file " + llm_cfg.replay_file() + " holds no answers");
  } catch (const llm::LlmError& e) {
    return fail(llm_error_exit(e.kind()), e.what());
  }

  // 3. The problem and the workers; on a first run these take minutes, so they say so.
  const Progress progress("solve", !a.quiet && !a.json && Progress::stderr_is_terminal());
  EvaluationSession session(evaluation_settings(a.run.eval));
  {
    Progress::Step step(progress, "loading the problem (a worker starts Python and torch, then runs it)");
    if (auto err = session.open(a.problem)) {
      int code = err->result.status == Status::InternalError ? solve_exit::kInternal : solve_exit::kProblemLoad;
      return fail(code, err->line);
    }
    step.done("problem loaded");
  }
  const ProblemSpec& spec = session.spec();
  std::variant<DeviceInfo, WorkerError> workers;
  {
    Progress::Step step(progress, "starting the worker (Python, torch, CUDA) and warming the problem up");
    workers = session.started();
    step.done("worker ready");
  }
  if (const auto* err = std::get_if<WorkerError>(&workers))
    return fail(solve_exit::kInternal, "cannot start the worker: " + err->message);
  const DeviceInfo device = std::get<DeviceInfo>(workers);
  const bool gpu = device.available;
  if (!gpu && !a.quiet)
    print_warning("solve", "no CUDA device visible: answers are compiled and checked, not run");

  // 4. Prompts, rendered once (the task names the times to beat); feedback per turn.
  prompt::PromptBuilder prompts(a.run.prompts.empty() ? fs::path() : fs::path(a.run.prompts));
  const loop::ProblemRunOptions options = problem_run_options(a.run);
  loop::ProblemPrompts rendered;
  try {
    // Measures the eager and torch.compile baselines first (once per problem, torch and GPU).
    Progress::Step step(progress, "measuring the baselines and writing the prompts");
    rendered = loop::render_problem_prompts(session, device, prompts, options.format);
    step.done("prompts ready");
  } catch (const loop::ProblemRunError& e) {
    return fail(solve_exit::kProblemLoad, e.what());
  }

  // 5. A new run folder (or the resumed one).
  if (!store) {
    try {
      store = traj::RunStore::create(a.runs_dir, spec.name, run_config(a.run, a.problem, llm_cfg));
    } catch (const std::exception& e) {
      return fail(solve_exit::kInternal, fmt::format("cannot create the run folder under {}: {}", a.runs_dir, e.what()));
    }
  }

  // 6. The samples, with the live view.
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  ViewMode mode = a.quiet ? ViewMode::Quiet : a.json ? ViewMode::Quiet : tty ? ViewMode::Table : ViewMode::Lines;
  std::string header = fmt::format("kagent solve  {}  {} sample(s) x {} turn(s)  {}  on {}\nrun  {}", spec.name,
                                   a.run.samples, a.run.turns, client->describe(), gpu ? device.name : "no GPU",
                                   store->dir().string());
  LiveView view(mode, std::cout, a.run.samples, a.run.turns, header);
  loop::ProblemRunOptions with_view = options;
  with_view.stop = &signalled;
  with_view.on_event = [&view](const loop::LoopEvent& e) { view.on_event(e); };
  loop::ProblemRun problem_run(session, device, *store, *client, prompts, std::move(rendered), loop::model_info(llm_cfg),
                               std::move(with_view));
  loop::SolveOutcome out = problem_run.run_samples(a.run.samples, cancel);
  view.close();
  store->write_summary();

  // 7. The verdict of the run.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  int code = store->best() ? solve_exit::kFound : solve_exit::kNoneCorrect;
  if (!store->best()) {
    bool all_llm = !out.samples.empty(), no_gpu_verdicts = false;
    for (const auto& s : out.samples) {
      all_llm = all_llm && !s.recorded && !s.interrupted.empty();
      for (const auto& turn : s.trajectory.turns) no_gpu_verdicts |= turn.eval && turn.eval->reason == reason::kNoGpu;
    }
    if (stop_signals.interrupted()) code = solve_exit::kInterrupted;
    else if (out.aborted) code = llm_error_exit(out.aborted->kind);
    else if (all_llm) code = solve_exit::kLlmFailed;
    else if (no_gpu_verdicts) code = solve_exit::kNoGpu;  // only when a verdict needed the GPU
  } else if (stop_signals.interrupted()) {
    code = solve_exit::kInterrupted;
  }
  if (a.json) std::cout << dump_json(solve_summary_json(*store, out, seconds, code), 2) << std::endl;
  else if (!a.quiet) std::cout << "\n" << render_solve_summary(*store, out, seconds);
  else if (auto b = store->best()) std::cout << (store->dir() / b->file).string() << "\n";
  // The run's page: written with --report; otherwise the command that writes it.
  const fs::path page = report::default_report_path(store->dir());
  if (a.report) {
    try {
      report::write_report(store->dir(), page);
      if (!a.quiet && !a.json) std::cout << "report    " << page.string() << "\n";
    } catch (const std::exception& e) {
      print_warning("solve", std::string("no report: ") + e.what());
    }
  } else if (!a.quiet && !a.json) {
    std::cout << "report    kagent report " << store->dir().string() << "  (or --report: " << page.string() << ")\n";
  }
  // Once per run: timings taken while another process used the GPU.
  bool warned = false;
  for (const auto& s : out.samples)
    for (const auto& turn : s.trajectory.turns)
      if (!warned && turn.eval)
        if (const std::string w = shared_gpu_warning(*turn.eval); !w.empty()) {
          print_warning("solve", w);
          warned = true;
        }
  if (out.aborted) print_error("solve", out.aborted->what());
  for (const auto& s : out.samples)
    if (!s.interrupted.empty() && !out.aborted) std::cerr << "kagent solve: sample " << s.trajectory.sample
                                                          << " stopped: " << s.interrupted << "\n";
  return code;
}

}  // namespace

int llm_error_exit(llm::ErrorKind kind) {
  switch (kind) {
    case llm::ErrorKind::MissingKey:
    case llm::ErrorKind::Config: return solve_exit::kLlmConfig;
    case llm::ErrorKind::Cancelled: return solve_exit::kInterrupted;
    default: return solve_exit::kLlmFailed;
  }
}

Command add_solve_command(CLI::App& app) {
  auto a = std::make_shared<SolveArgs>();
  CLI::App* sub = app.add_subcommand("solve", "Ask a model for a faster kernel, refine it over several turns, keep the best");
  sub->add_option("problem", a->problem, "KernelBench problem file (not needed with --resume)");
  sub->add_option("--runs-dir", a->runs_dir, "where run folders go (default ./runs)");
  sub->add_option("--resume", a->resume, "continue the run in this folder where it stopped");
  add_solve_flags(*sub, a->run);
  sub->add_flag("-q,--quiet", a->quiet, "print only the best kernel's path");
  sub->add_flag("--json", a->json, "print the run's summary as JSON");
  sub->add_flag("--report", a->report, "write the run's HTML page (RUN/report.html) at the end");
  return Command{sub, [a] {
                   if (a->problem.empty() && a->resume.empty())
                     return fail(solve_exit::kUsage, "missing PROBLEM: give a problem file, or --resume RUN_FOLDER");
                   if (!a->problem.empty() && !a->resume.empty())
                     return fail(solve_exit::kUsage, "give a problem file or --resume RUN_FOLDER, not both");
                   try {
                     return run_solve(*a);
                   } catch (const std::exception& e) {
                     return fail(solve_exit::kInternal, std::string("internal: ") + e.what());
                   }
                 }};
}

}  // namespace kagent::cli
