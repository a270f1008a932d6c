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
#include "cli/live_view.h"
#include "cli/progress.h"
#include "cli/solve_summary.h"
#include "common/json_optional.h"
#include "evaluation/evaluation_session.h"
#include "llm/cancel.h"
#include "llm/llm_config.h"
#include "loop/session_evaluator.h"
#include "loop/solve_runner.h"
#include "result/eval_report.h"
#include "report/report_writer.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct SolveArgs {
  std::string problem, format = "cuda", history = "kernels", runs_dir = "runs", resume, prompts;
  int samples = 1, turns = 4;
  std::optional<int64_t> history_tokens, max_tokens;
  std::optional<double> target_speedup, max_seconds;
  bool quiet = false, json = false, report = false;
  EvalFlags eval;
  llm::LlmFlags llm;
};

int fail(int code, const std::string& line) {
  print_error("solve", line);
  return code;
}

// The settings a run folder records, so that --resume continues the same run.
nlohmann::json run_config(const SolveArgs& a, const llm::LlmConfig& cfg) {
  nlohmann::json sampling = nlohmann::json::object();
  if (cfg.sampling.temperature) sampling["temperature"] = *cfg.sampling.temperature;
  if (cfg.sampling.top_p) sampling["top_p"] = *cfg.sampling.top_p;
  if (cfg.sampling.max_tokens) sampling["max_tokens"] = *cfg.sampling.max_tokens;
  if (cfg.sampling.reasoning_effort) sampling["reasoning_effort"] = *cfg.sampling.reasoning_effort;
  return {{"problem", a.problem},
          {"format", a.format},
          {"samples", a.samples},
          {"turns", a.turns},
          {"history", a.history},
          {"history_tokens", json_or_null(a.history_tokens)},
          {"target_speedup", json_or_null(a.target_speedup)},
          {"max_tokens", json_or_null(a.max_tokens)},
          {"max_seconds", json_or_null(a.max_seconds)},
          {"prompts", a.prompts},
          {"eval", a.eval},
          {"llm", {{"provider", cfg.provider}, {"model", cfg.model}, {"base_url", cfg.base_url}, {"sampling", sampling}}}};
}

// --resume: the run's own settings come back from its config.json; LLM flags given now win
// (a key, a new server address), the rest of the LLM settings come from the run.
void apply_run_config(SolveArgs& a, const nlohmann::json& c) {
  a.problem = c.value("problem", a.problem);
  a.format = c.value("format", a.format);
  a.samples = c.value("samples", a.samples);
  a.turns = c.value("turns", a.turns);
  a.history = c.value("history", a.history);
  auto get = [&](const char* k, auto& dst) {
    if (c.contains(k) && !c[k].is_null()) dst = c[k].get<typename std::decay_t<decltype(dst)>::value_type>();
  };
  get("history_tokens", a.history_tokens);
  get("target_speedup", a.target_speedup);
  get("max_tokens", a.max_tokens);
  get("max_seconds", a.max_seconds);
  a.prompts = c.value("prompts", a.prompts);
  // Runs recorded before the evaluation flags were grouped kept a few of them at the top level.
  from_json(c.contains("eval") ? c["eval"] : c, a.eval);
  const nlohmann::json llm = c.value("llm", nlohmann::json::object());
  if (!a.llm.provider && llm.contains("provider")) a.llm.provider = llm["provider"].get<std::string>();
  if (!a.llm.model && llm.contains("model") && !llm["model"].get<std::string>().empty())
    a.llm.model = llm["model"].get<std::string>();
  if (!a.llm.base_url && llm.contains("base_url") && !llm["base_url"].get<std::string>().empty())
    a.llm.base_url = llm["base_url"].get<std::string>();
  const nlohmann::json s = llm.value("sampling", nlohmann::json::object());
  if (!a.llm.temperature && s.contains("temperature")) a.llm.temperature = s["temperature"].get<double>();
  if (!a.llm.top_p && s.contains("top_p")) a.llm.top_p = s["top_p"].get<double>();
  if (!a.llm.max_tokens && s.contains("max_tokens")) a.llm.max_tokens = s["max_tokens"].get<int>();
  if (!a.llm.reasoning_effort && s.contains("reasoning_effort"))
    a.llm.reasoning_effort = s["reasoning_effort"].get<std::string>();
}

int llm_exit(llm::ErrorKind k) {
  switch (k) {
    case llm::ErrorKind::MissingKey:
    case llm::ErrorKind::Config: return solve_exit::kLlmConfig;
    case llm::ErrorKind::Cancelled: return solve_exit::kInterrupted;
    default: return solve_exit::kLlmFailed;
  }
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
    } catch (const std::exception& e) {
      return fail(solve_exit::kNotARun, fmt::format("cannot resume {}: {}", a.resume, e.what()));
    }
    apply_run_config(a, store->config());
  }
  if (!fs::is_regular_file(a.problem)) return fail(solve_exit::kFileNotFound, "no such file: " + a.problem);
  a.problem = fs::absolute(a.problem).string();
  const prompt::AnswerFormat format = prompt::answer_format_from_string(a.format);
  const loop::HistoryPolicy history = loop::history_policy_from_string(a.history);

  // 2. The model, before any GPU work: a missing key should cost nothing.
  llm::CancelToken cancel;
  llm::ScopedSigintCancel sigint(cancel);
  llm::LlmConfig llm_cfg;
  std::unique_ptr<llm::LlmClient> client;
  try {
    llm_cfg = llm::resolve_llm_config(a.llm);
    client = llm::make_client(llm_cfg, llm::ClientHooks{&cancel, {}});
  } catch (const llm::LlmError& e) {
    return fail(llm_exit(e.kind()), e.what());
  }

  // 3. The problem and the workers; on a first run these take minutes, so they say so.
  const Progress progress("solve", !a.quiet && !a.json && Progress::stderr_is_terminal());
  EvaluationSession session(evaluation_settings(a.eval));
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

  // 4. Prompts, rendered once; feedback per turn. The task names the times to beat.
  prompt::PromptBuilder prompts(a.prompts.empty() ? fs::path() : fs::path(a.prompts));
  prompt::Baselines baselines;
  if (gpu) {
    Progress::Step step(progress, "measuring the eager and torch.compile baselines (once per problem, torch and GPU)");
    if (auto t = session.baselines()) {
      if (t->eager) baselines.eager_ms = t->eager->median_ms;
      if (t->compiled) baselines.compile_ms = t->compiled->median_ms;
    }
    step.done("baselines measured");
  }
  std::string system_prompt, task_prompt;
  try {
    system_prompt = prompts.system_prompt(format, device);
    task_prompt = prompts.task_prompt(spec, format, baselines);
  } catch (const std::exception& e) {
    return fail(solve_exit::kProblemLoad, fmt::format("cannot write the prompts for {}: {}", spec.name, e.what()));
  }

  // 5. A new run folder (or the resumed one).
  if (!store) {
    try {
      store = traj::RunStore::create(a.runs_dir, spec.name, run_config(a, llm_cfg));
    } catch (const std::exception& e) {
      return fail(solve_exit::kInternal, fmt::format("cannot create the run folder under {}: {}", a.runs_dir, e.what()));
    }
  }

  traj::Trajectory fresh;
  fresh.run_id = store->run_id();
  fresh.problem = traj::problem_info_from_spec(spec);
  fresh.model = {llm_cfg.is_replay() ? "replay" : llm_cfg.provider, llm_cfg.model, llm_cfg.base_url, {}};
  fresh.model.sampling.temperature = llm_cfg.sampling.temperature;
  fresh.model.sampling.top_p = llm_cfg.sampling.top_p;
  fresh.model.sampling.max_tokens = llm_cfg.sampling.max_tokens;
  fresh.model.sampling.reasoning_effort = llm_cfg.sampling.reasoning_effort;
  fresh.max_turns = a.turns;
  fresh.versions = traj::Versions::from_build();
  fresh.versions.gpu = gpu ? device.name : "";

  // 6. The samples, with the live view.
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  ViewMode mode = a.quiet ? ViewMode::Quiet : a.json ? ViewMode::Quiet : tty ? ViewMode::Table : ViewMode::Lines;
  std::string header = fmt::format("kagent solve  {}  {} sample(s) x {} turn(s)  {}  on {}\nrun  {}", spec.name,
                                   a.samples, a.turns, client->describe(), gpu ? device.name : "no GPU",
                                   store->dir().string());
  LiveView view(mode, std::cout, a.samples, a.turns, header);
  loop::SessionEvaluator evaluator(session, format);
  loop::SampleContext ctx{.llm = *client,
                          .evaluator = evaluator,
                          .prompts = prompts,
                          .store = *store,
                          .spec = spec,
                          .format = format,
                          .system_prompt = system_prompt,
                          .task_prompt = task_prompt,
                          .history = {history, a.history_tokens},
                          .limits = {a.turns, a.target_speedup, a.max_tokens, a.max_seconds},
                          .sampling = std::nullopt,
                          .on_event = [&view](const loop::LoopEvent& e) { view.on_event(e); }};
  loop::SolveOutcome out = loop::run_samples(ctx, fresh, a.samples, cancel);
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
    if (out.aborted) code = sigint.interrupted() ? solve_exit::kInterrupted : llm_exit(out.aborted->kind);
    else if (all_llm) code = solve_exit::kLlmFailed;
    else if (no_gpu_verdicts) code = solve_exit::kNoGpu;  // only when a verdict needed the GPU
  } else if (sigint.interrupted()) {
    code = solve_exit::kInterrupted;
  }
  if (a.json) std::cout << solve_summary_json(*store, out, seconds, code).dump(2) << std::endl;
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

Command add_solve_command(CLI::App& app) {
  auto a = std::make_shared<SolveArgs>();
  CLI::App* sub = app.add_subcommand("solve", "Ask a model for a faster kernel, refine it over several turns, keep the best");
  sub->add_option("problem", a->problem, "KernelBench problem file (not needed with --resume)");
  sub->add_option("--format", a->format, "answer format: cuda (default) | kernelbench")
      ->check(one_of({"cuda", "kernelbench"}));
  sub->add_option("-n,--samples", a->samples, "parallel samples (default 1)")->check(whole_number(1, 1024));
  sub->add_option("-t,--turns", a->turns, "refinement turns per sample (default 4)")->check(whole_number(1, 1000));
  sub->add_option("--history", a->history, "what later turns see of earlier ones: full | kernels (default) | last")
      ->check(one_of({"full", "kernels", "last"}));
  sub->add_option("--history-tokens", a->history_tokens, "token budget of a request: the oldest turns go first")
      ->check(whole_number(1));
  sub->add_option("--target-speedup", a->target_speedup, "stop a sample once a correct turn reaches this speedup over eager")
      ->check(number_from(0, /*above=*/true));
  sub->add_option("--max-tokens-per-sample", a->max_tokens, "stop a sample after this many tokens (prompt + completion)")
      ->check(whole_number(1));
  sub->add_option("--max-seconds-per-sample", a->max_seconds, "stop a sample after this much model + evaluation time")
      ->check(number_from(0, /*above=*/true));
  sub->add_option("--runs-dir", a->runs_dir, "where run folders go (default ./runs)");
  sub->add_option("--resume", a->resume, "continue the run in this folder where it stopped");
  sub->add_option("--prompts", a->prompts, "folder of prompt templates replacing prompts/ (same file names)");
  add_eval_flags(*sub, a->eval, /*several_gpus=*/true);
  sub->add_flag("-q,--quiet", a->quiet, "print only the best kernel's path");
  sub->add_flag("--json", a->json, "print the run's summary as JSON");
  sub->add_flag("--report", a->report, "write the run's HTML page (RUN/report.html) at the end");
  add_llm_flags(*sub, a->llm);
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
