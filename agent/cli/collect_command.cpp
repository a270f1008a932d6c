#include "cli/collect_command.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/errors.h"
#include "build_info.h"
#include "cli/collect_view.h"
#include "cli/input_files.h"
#include "cli/solve_settings.h"
#include "cli/suite_flags.h"
#include "collect/baselines_table.h"
#include "collect/collection_merge.h"
#include "collect/collection_metrics_file.h"
#include "collect/collection_runner.h"
#include "collect/collection_store.h"
#include "collect/suite.h"
#include "common/cpu_affinity.h"
#include "common/files.h"
#include "common/json_optional.h"
#include "common/utf8.h"
#include "llm/cancel.h"
#include "llm/limited_client.h"
#include "llm/replay_client.h"
#include "metrics/metrics_table.h"
#include "report/report_writer.h"
#include "result/eval_report.h"
#include "trajectory/run_store.h"

namespace kagent::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct CollectArgs {
  SuiteFlags suite;
  std::string out, runs_dir = "runs", resume, metrics, order = "largest";
  std::vector<std::string> merge;
  int concurrency = 0;
  int workers_per_gpu = 0;  // 0: EvaluationPool's default_workers_per_gpu
  unsigned compile_jobs = 0;
  bool compile_only = false, report = false, quiet = false;
  SolveSettings run;
};

int fail(int code, const std::string& line) {
  print_error("collect", line);
  return code;
}

json manifest_config(const CollectArgs& a, const llm::LlmConfig& cfg, const collect::SuiteFilter& filter) {
  json c = run_config(a.run, "", cfg);
  c.erase("problem");
  c["compile_only"] = a.compile_only;
  c["filters"] = collect::to_json(filter);
  c["order"] = a.order;
  return c;
}

json suite_json(const std::string& root, const std::vector<collect::SuiteProblem>& problems) {
  json list = json::array();
  for (const auto& p : problems) {
    json j = p;
    j["op_type"] = traj::op_type_for(p.level, "");
    list.push_back(std::move(j));
  }
  return {{"root", root}, {"problems", list}};
}

fs::path default_out(const CollectArgs& a, const Selection& s) {
  std::string name = fs::path(s.suite.root).filename().string();
  if (name.empty()) name = "suite";
  name = "collect-" + fs::path(name).stem().string();
  if (s.shard) name += fmt::format("-shard{}of{}", s.shard->first, s.shard->second);
  return fs::path(a.runs_dir) / traj::RunStore::make_run_name(name, std::time(nullptr));
}

// --metrics RUN: the numbers again, from the records.
int run_metrics(const CollectArgs& a) {
  if (!fs::is_directory(a.metrics)) return fail(collect_exit::kNotFound, "no such collection folder: " + a.metrics);
  try {
    // A record read past (a torn or unreadable line) is said: its sample is not counted.
    std::vector<std::string> warnings;
    const json m = collect::write_collection_metrics(a.metrics, "kagent collect --metrics", &warnings);
    for (const auto& w : warnings) print_warning("collect", w);
    std::cout << metrics::render_metrics_table(m);
    std::cout << "metrics   " << (fs::path(a.metrics) / collect::kMetricsFile).string() << " (and "
              << collect::kMetricsCsvFile << ")\n";
  } catch (const collect::NotACollection& e) {
    return fail(collect_exit::kNotACollection, e.what());
  }
  return collect_exit::kComplete;
}

// --merge OUT RUN...
int run_merge(const CollectArgs& a) {
  if (a.merge.size() < 2) return fail(collect_exit::kUsage, "--merge needs the output folder and at least one collection");
  const fs::path out = a.merge[0];
  std::vector<fs::path> runs(a.merge.begin() + 1, a.merge.end());
  for (const auto& r : runs)
    if (!fs::is_directory(r)) return fail(collect_exit::kNotFound, "no such collection folder: " + r.string());
  collect::MergeSummary s;
  try {
    s = collect::merge_collections(out, runs);
  } catch (const collect::MergeError& e) {
    const int code = e.kind == "mixed_config"       ? collect_exit::kMixedConfig
                     : e.kind == "not_a_collection" ? collect_exit::kNotACollection
                                                    : collect_exit::kUsage;
    return fail(code, e.what());
  }
  for (const auto& w : s.warnings) print_warning("collect", w);
  std::cout << fmt::format("merged    {} collection(s) into {}: {} problems, {} samples, {} duplicate(s) dropped, {} problem(s) cannot run\n",
                           runs.size(), out.string(), s.problems, s.samples, s.duplicates_dropped, s.problem_errors);
  std::cout << metrics::render_metrics_table(json::parse(read_file(out / collect::kMetricsFile)));
  return collect_exit::kComplete;
}

int run_collect(CollectArgs a) {
  // 1. The collection: a new one from the suite, or the one --resume names (its settings win).
  std::unique_ptr<collect::CollectionStore> store;
  Selection sel;
  std::vector<collect::SuiteProblem> problems;
  if (!a.resume.empty()) {
    if (!fs::is_directory(a.resume)) return fail(collect_exit::kNotFound, "no such collection folder: " + a.resume);
    try {
      store = collect::CollectionStore::open(a.resume);
    } catch (const collect::NotACollection& e) {
      return fail(collect_exit::kNotACollection, e.what());
    }
    const json config = get_or(store->manifest(), "config", json::object());
    const std::vector<int> gpus_now = a.run.eval.gpus;
    apply_run_config(a.run, config);
    if (!gpus_now.empty()) a.run.eval.gpus = gpus_now;  // this machine's GPUs, not the first run's
    a.compile_only = get_or(config, "compile_only", false);
    a.order = get_or<std::string>(config, "order", a.order);
    for (const auto& p : get_or(get_or(store->manifest(), "suite", json::object()), "problems", json::array()))
      problems.push_back(p.get<collect::SuiteProblem>());
  } else {
    auto s = select_problems(a.suite);
    if (auto* f = std::get_if<SelectionError>(&s)) return fail(f->exit_status, f->line);
    sel = std::move(std::get<Selection>(s));
    problems = sel.problems;
  }
  const collect::Order order = collect::order_from_string(a.order);

  // 2. The model, before any GPU work: a missing key should cost nothing.
  llm::CancelToken cancel, signalled;
  llm::ScopedSignalCancel stop_signals(cancel, &signalled);
  llm::LlmConfig llm_cfg;
  std::unique_ptr<llm::LlmClient> client;
  try {
    llm_cfg = llm::resolve_llm_config(a.run.llm);
    auto model = llm::make_client(llm_cfg, llm::ClientHooks{&cancel, {}});
    // A new collection on a replay of no answers could only run out on its first request, after
    // the workers started and the collection folder was made.
    if (const auto* replay = dynamic_cast<const llm::ReplayClient*>(model.get()); replay && replay->size() == 0 && !store)
      return fail(collect_exit::kLlmConfig, "replay file " + llm_cfg.replay_file() + " holds no answers");
    client = std::make_unique<llm::LimitedClient>(std::move(model), llm_cfg.max_in_flight, &cancel);
  } catch (const llm::LlmError& e) {
    return fail(llm_error_exit(e.kind()), e.what());
  }

  // The new collection's folder, before the workers start: one that cannot be made ends here.
  const fs::path out_dir = store ? store->dir() : a.out.empty() ? default_out(a, sel) : fs::path(a.out);
  if (!store)
    if (auto why = output_folder_problem(out_dir)) return fail(collect_exit::kUsage, "--out: " + *why);

  // 3. The workers (--workers-per-gpu on each GPU) and the compile pool, shared by every problem.
  EvaluationSettings settings = evaluation_settings(a.run.eval);
  settings.compile_jobs = a.compile_jobs;
  settings.hide_gpus = a.compile_only;
  settings.workers_per_gpu = a.workers_per_gpu;  // 0: the pool's default
  settings.prepare_inline_headers = a.run.format == "kernelbench";  // while the workers start
  auto pool = std::make_shared<EvaluationPool>(settings);
  pool->start();
  const auto workers = pool->started();
  if (const auto* err = std::get_if<WorkerError>(&workers))
    return fail(collect_exit::kInternal, "cannot start the worker: " + err->message);
  const DeviceInfo device = std::get<DeviceInfo>(workers);
  if (!device.available && !a.compile_only && !a.quiet)
    std::cerr << "kagent collect: warning: no CUDA device visible: answers are compiled and checked, not run "
                 "(--compile-only says that is intended)\n";

  // 4. A new collection folder.
  if (!store) {
    traj::Versions versions = traj::Versions::from_build();
    versions.gpu = device.available ? device.name : "";
    json manifest = {{"kind", collect::kCollectionKind},
                     {"schema_version", collect::kCollectionSchema},
                     {"config", manifest_config(a, llm_cfg, sel.filter)},
                     {"versions", versions},
                     {"shard", sel.shard ? json{{"index", sel.shard->first}, {"count", sel.shard->second}} : json(nullptr)},
                     {"suite", suite_json(sel.suite.root, problems)},
                     {"created_at", traj::now_iso8601()}};
    const fs::path& out = out_dir;
    try {
      store = collect::CollectionStore::create(out, manifest);
    } catch (const std::exception& e) {
      return fail(collect_exit::kUsage, fmt::format("cannot create the collection folder {}: {}", out.string(), e.what()));
    }
  }
  for (const auto& w : store->warnings()) print_warning("collect", w);

  // 5. The samples, with the progress view.
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  const ViewMode mode = a.quiet ? ViewMode::Quiet : tty ? ViewMode::Table : ViewMode::Lines;
  const int workers_n = static_cast<int>(pool->size());
  const int gpus_n = static_cast<int>(pool->gpu_count());  // rates are per GPU, whatever its workers
  const std::string header =
      fmt::format("kagent collect  {} problem(s) x {} sample(s) x {} turn(s)  {}  on {}\ncollection  {}", problems.size(),
                  a.run.samples, a.run.turns, client->describe(),
                  device.available ? fmt::format("{} x {} ({} worker(s))", gpus_n, device.name, workers_n)
                                   : std::string("no GPU (compile only)"),
                  store->dir().string());
  CollectView view(mode, std::cout, header, [&pool] { return pool->counters(); }, gpus_n);
  prompt::PromptBuilder prompts(a.run.prompts.empty() ? fs::path() : fs::path(a.run.prompts));
  collect::RunnerConfig rc;
  rc.pool = pool;
  rc.llm = client.get();
  rc.prompts = &prompts;
  rc.model = loop::model_info(llm_cfg);
  rc.options = problem_run_options(a.run);
  rc.options.stop = &signalled;  // a turn evaluated while a signal stops the collection is run again on resume
  rc.samples = a.run.samples;
  const unsigned compile_threads = a.compile_jobs ? a.compile_jobs : usable_cpu_count();
  rc.concurrency = a.concurrency > 0 ? a.concurrency
                                     : llm_cfg.max_in_flight + static_cast<int>(compile_threads) + 2 * workers_n;
  rc.order = order;
  rc.prompt_baselines = !llm_cfg.is_replay();  // a replay's answers are written: its evaluations time what they need
  rc.problem_config = [&](const collect::SuiteProblem& p) { return run_config(a.run, p.path, llm_cfg); };
  // Once per run: timings taken while another process used the GPU.
  std::mutex shared_mu;
  std::string shared_warning;
  rc.on_event = [&view, &shared_mu, &shared_warning](const collect::CollectEvent& e) {
    view.on_event(e);
    if (e.kind == collect::CollectEvent::Kind::Turn && e.turn && e.turn->eval) {
      std::lock_guard lock(shared_mu);
      if (shared_warning.empty()) shared_warning = shared_gpu_warning(*e.turn->eval);
    }
  };
  collect::CollectOutcome out = collect::run_collection(*store, problems, rc, cancel);
  view.close();
  if (!shared_warning.empty()) print_warning("collect", shared_warning);

  // 6. What the run leaves: baselines, metrics, summary, the table.
  const PoolCounters counters = pool->counters();
  if (!out.baseline_rows.empty()) {
    const fs::path file = store->dir() / collect::kBaselinesFile;
    json table = collect::baselines_table(device.name, device.torch_version, out.baseline_rows);
    if (fs::exists(file)) table = collect::merge_baselines(json::parse(read_file(file), nullptr, false), table);
    store->write_file(collect::kBaselinesFile, dump_json(table, 2) + "\n");
  }
  const json m = collect::write_collection_metrics(store->dir(), "kagent collect");
  const collect::IndexState index = collect::read_index(store->dir() / collect::kIndexFile);
  int failed_samples = 0;
  for (const auto& [key, line] : index.samples) failed_samples += line.value("status", "") == "failed" ? 1 : 0;
  const double minutes = out.wall_seconds / 60.0;
  const double per_gpu_minute = minutes > 0 ? counters.evaluations / (gpus_n * minutes) : 0.0;
  auto ratio = [&](double seconds) { return out.wall_seconds > 0 ? seconds / out.wall_seconds : 0.0; };
  // Per worker (its GPU's index; several workers per GPU by default): its evaluations; busy, the time it spent inside evaluations (the GPU's
  // real work, a torch-built fallback's compile included); held, the time it was leased for any
  // request (problem loads and baselines too); and the time it sat free while a request waited
  // for a worker (0 when the GPUs are fed).
  json per_gpu = json::array();
  for (const auto& w : counters.workers)
    per_gpu.push_back({{"gpu", w.gpu},
                       {"evaluations", w.evaluations},
                       {"eval_seconds", w.eval_seconds},
                       {"busy_seconds", w.eval_seconds},
                       {"busy_ratio", ratio(w.eval_seconds)},
                       {"held_seconds", w.held_seconds},
                       {"held_ratio", ratio(w.held_seconds)},
                       {"load_seconds", w.load_seconds},
                       {"baselines_seconds", w.baselines_seconds},
                       {"idle_while_queued_seconds", w.idle_while_queued_seconds}});
  // Per GPU, how its timing lock was held (evaluation/gpu_lock_usage.h): exclusive plus shared is
  // the GPU's busy time as kagent used it; free, the time nobody of this run held it.
  json gpu_locks = json::array();
  for (const auto& g : counters.gpu_locks)
    gpu_locks.push_back({{"gpu", g.gpu},
                         {"seconds", g.lock.seconds},
                         {"exclusive_seconds", g.lock.exclusive_seconds},
                         {"shared_seconds", g.lock.shared_seconds},
                         {"shared_by_workers_seconds", g.lock.shared_by},
                         {"draining_seconds", g.lock.draining_seconds},
                         {"free_seconds", g.lock.free_seconds}});
  json sample_errors = json::array();
  for (const auto& f : out.sample_failures)
    sample_errors.push_back({{"problem", f.problem}, {"sample", f.sample}, {"error", f.what}});
  store->write_file(collect::kSummaryFile,
                    dump_json(json({{"problems", problems.size()},
                          {"problem_errors", index.problem_errors.size()},
                          {"samples_expected", problems.size() * static_cast<size_t>(a.run.samples)},
                          {"samples_done", index.samples.size()},
                          {"samples_failed", failed_samples},
                          {"samples_stopped", out.samples_stopped},
                          {"sample_errors", sample_errors},
                          {"evaluations", counters.evaluations},
                          {"compiles", counters.compiles},
                          {"gpus", device.available ? gpus_n : 0},
                          {"workers", workers_n},
                          // What decided the rate beside the GPUs: the order and the compilers' share of the
                          // cores (compiler_cpus 0: no cores kept free; tools/common/cpu_affinity.h).
                          {"order", collect::to_string(order)},
                          {"compile_slots", pool->compile_slots()},
                          {"compiler_cpus", pool->compile_cpus().size()},
                          {"wall_seconds", out.wall_seconds},
                          {"evals_per_gpu_minute", per_gpu_minute},
                          {"per_gpu", per_gpu},
                          {"gpu_locks", gpu_locks},
                          // The trials' CPU draws made ahead of the workers (evaluation/draw_ahead.h).
                          {"draws_ahead", {{"processes_running", counters.draws.running},
                                           {"problems_asked", counters.draws.asked},
                                           {"problems_drawn", counters.draws.drawn},
                                           {"problems_kept", counters.draws.kept},
                                           {"problems_skipped", counters.draws.skipped},
                                           {"seconds", counters.draws.seconds},
                                           {"bytes", counters.draws.bytes},
                                           {"ended", counters.draws.ended}}},
                          {"updated_at", traj::now_iso8601()}}),
                              2) +
                        "\n");
  if (!a.quiet) {
    std::cout << "\n" << metrics::render_metrics_table(m);
    std::cout << fmt::format("done      {}/{} samples of {} problem(s) that run ({} cannot), {} evaluations in {:.1f} s ({:.1f} per GPU-minute)\n",
                             index.samples.size(), (problems.size() - index.problem_errors.size()) * static_cast<size_t>(a.run.samples),
                             problems.size() - index.problem_errors.size(), index.problem_errors.size(),
                             counters.evaluations, out.wall_seconds, per_gpu_minute);
    if (device.available || counters.workers.size() > 1)
      for (const auto& w : counters.workers)
        std::cout << fmt::format("gpu {:<5} {} evaluations, busy evaluating {:.1f} s of {:.1f} s ({:.0f}%), held {:.1f} s "
                               "(problem loads {:.1f} s and baselines {:.1f} s too), idle while work was queued {:.2f} s\n",
                               w.gpu < 0 ? std::string("-") : std::to_string(w.gpu), w.evaluations, w.eval_seconds,
                               out.wall_seconds, 100.0 * ratio(w.eval_seconds), w.held_seconds, w.load_seconds,
                               w.baselines_seconds, w.idle_while_queued_seconds);
    if (device.available)
      for (const auto& g : counters.gpu_locks) {
        const auto pct = [&](double x) { return g.lock.seconds > 0 ? 100.0 * x / g.lock.seconds : 0.0; };
        std::cout << fmt::format("gpu {:<5} timing lock over {:.1f} s: exclusive {:.1f} s ({:.0f}%), shared {:.1f} s ({:.0f}%; "
                                 "{:.1f} s of it draining for a timing), free {:.1f} s ({:.0f}%)\n",
                                 g.gpu < 0 ? std::string("-") : std::to_string(g.gpu), g.lock.seconds,
                                 g.lock.exclusive_seconds, pct(g.lock.exclusive_seconds), g.lock.shared_seconds,
                                 pct(g.lock.shared_seconds), g.lock.draining_seconds, g.lock.free_seconds,
                                 pct(g.lock.free_seconds));
      }
    std::cout << "metrics   " << (store->dir() / collect::kMetricsFile).string() << " (and " << collect::kMetricsCsvFile
              << ")\n";
  }
  const fs::path page = report::default_report_path(store->dir());
  if (a.report) {
    try {
      report::write_report(store->dir(), page);
      if (!a.quiet) std::cout << "report    " << page.string() << "\n";
    } catch (const std::exception& e) {
      print_warning("collect", std::string("no report: ") + e.what());
    }
  } else if (!a.quiet) {
    std::cout << "report    kagent report " << store->dir().string() << "\n";
  }
  if (!a.quiet) std::cout << "collection " << store->dir().string() << "\n";

  // 7. The status: the worst thing that happened.
  if (!out.internal_error.empty()) return fail(collect_exit::kInternal, out.internal_error);
  // A signal, whether or not it also cut a model request short (which then aborted the run).
  if (stop_signals.interrupted())
    return fail(collect_exit::kInterrupted, fmt::format("stopped by a signal; what was running is run again on resume "
                                                        "(kagent collect --resume {})",
                                                        store->dir().string()));
  if (out.aborted)
    return fail(llm_error_exit(out.aborted->kind),
                fmt::format("{} (resume: kagent collect --resume {})", out.aborted->what(), store->dir().string()));
  if (out.samples_stopped > 0)
    return fail(collect_exit::kLlmFailed, fmt::format("{} sample(s) stopped on model failures (resume: kagent collect --resume {})",
                                                      out.samples_stopped, store->dir().string()));
  if (!out.sample_failures.empty()) {
    std::string names;
    for (size_t i = 0; i < out.sample_failures.size() && i < 5; ++i)
      names += fmt::format("{}{} sample {} ({})", i ? "; " : "", out.sample_failures[i].problem, out.sample_failures[i].sample,
                           out.sample_failures[i].what.substr(0, 160));
    if (out.sample_failures.size() > 5) names += fmt::format("; and {} more", out.sample_failures.size() - 5);
    return fail(collect_exit::kSampleErrors,
                fmt::format("{} sample(s) could not be run or recorded, the others were: {} (retry: kagent collect --resume {})",
                            out.sample_failures.size(), names, store->dir().string()));
  }
  if (!out.problem_errors.empty()) {
    std::string names;
    for (size_t i = 0; i < out.problem_errors.size() && i < 5; ++i)
      names += (i ? "; " : "") + out.problem_errors[i].first + " (" + out.problem_errors[i].second.substr(0, 160) + ")";
    if (out.problem_errors.size() > 5) names += fmt::format("; and {} more", out.problem_errors.size() - 5);
    return fail(collect_exit::kProblemErrors,
                fmt::format("{} of {} problem(s) cannot run: {}", out.problem_errors.size(), problems.size(), names));
  }
  if (!device.available && !a.compile_only) return collect_exit::kNoGpu;
  return collect_exit::kComplete;
}

}  // namespace

Command add_collect_command(CLI::App& app) {
  auto a = std::make_shared<CollectArgs>();
  CLI::App* sub = app.add_subcommand(
      "collect", "Run the refinement loop over a whole suite: many problems x samples x turns, resumable and shardable");
  add_suite_flags(*sub, a->suite, /*shards=*/true);
  sub->add_option("--order", a->order, "largest (default: largest known footprints first, then large files spread among the rest) | interleaved (sample 0 of every problem, then 1, ...)")
      ->check(CLI::IsMember({"largest", "interleaved"}));
  sub->add_option("-o,--out", a->out, "the collection folder (default: RUNS_DIR/<time>-collect-<suite>)");
  sub->add_option("--runs-dir", a->runs_dir, "where the collection folder goes without --out (default ./runs)");
  sub->add_option("--concurrency", a->concurrency,
                  "samples in progress at once (default: --max-in-flight + compile jobs + 2 per worker)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--compile-jobs", a->compile_jobs, "nvcc processes at once (default: one per CPU core it may use: a taskset or cpuset counts)")
      ->check(CLI::Range(1u, 4096u));
  add_workers_per_gpu_flag(*sub, a->workers_per_gpu);
  sub->add_flag("--compile-only", a->compile_only, "compile and check answers, never run them (no GPU used; CI, CPU nodes)");
  sub->add_flag("--report", a->report, "write the collection's HTML page (report.html) at the end");
  sub->add_flag("-q,--quiet", a->quiet, "print only errors");
  sub->add_option("--resume", a->resume, "continue the collection in this folder (finished samples are skipped)");
  sub->add_option("--merge", a->merge, "OUT RUN...: join collections (shards) into the new folder OUT")->expected(2, -1);
  sub->add_option("--metrics", a->metrics, "recompute and print the metrics of a collection folder");
  add_solve_flags(*sub, a->run);
  return Command{sub, [a] {
                   const int modes = !a->suite.suite.empty() + !a->resume.empty() + !a->merge.empty() + !a->metrics.empty();
                   if (modes != 1) {
                     std::cerr << "kagent collect: error: give one of: a suite, --resume FOLDER, --merge OUT RUN..., "
                                  "--metrics FOLDER\n";
                     return collect_exit::kUsage;
                   }
                   try {
                     if (!a->metrics.empty()) return run_metrics(*a);
                     if (!a->merge.empty()) return run_merge(*a);
                     return run_collect(*a);
                   } catch (const std::exception& e) {
                     print_error("collect", std::string("internal: ") + e.what());
                     return collect_exit::kInternal;
                   }
                 }};
}

}  // namespace kagent::cli
