#include "cli/baselines_command.h"

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/errors.h"
#include "cli/eval_flags.h"
#include "cli/suite_flags.h"
#include "collect/baselines_table.h"
#include "common/files.h"
#include "common/units.h"
#include "common/utf8.h"
#include "evaluation/evaluation_session.h"
#include "trajectory/trajectory.h"

namespace kagent::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// kagent's own buffers stay within this many times a problem's footprint (inputs + parameters
// + outputs): a problem fits when that much is free on the GPU.
constexpr int64_t kMemoryPerFootprint = 4;

struct BaselinesArgs {
  SuiteFlags suite;
  std::string out = "baselines";
  bool quiet = false;
  EvalFlags eval;
};

int fail(int code, const std::string& line) {
  print_error("baselines", line);
  return code;
}

struct ProblemOutcome {
  std::optional<json> row;
  std::string failure;  // why it cannot run, else empty
};

int run_baselines(const BaselinesArgs& a) {
  auto sel_or = select_problems(a.suite);
  if (auto* f = std::get_if<SelectionError>(&sel_or)) return fail(f->exit_status, f->line);
  const Selection& sel = std::get<Selection>(sel_or);

  EvaluationSettings settings = evaluation_settings(a.eval);
  auto pool = std::make_shared<EvaluationPool>(settings);
  pool->start();
  const auto workers = pool->started();
  if (const auto* err = std::get_if<WorkerError>(&workers))
    return fail(baselines_exit::kInternal, "cannot start the worker: " + err->message);
  const DeviceInfo device = std::get<DeviceInfo>(workers);
  if (!a.quiet)
    std::cout << fmt::format("kagent baselines  {} problem(s)  on {}\n", sel.problems.size(),
                             device.available ? fmt::format("{} x {}", pool->size(), device.name)
                                              : std::string("no GPU: problems are loaded and checked, nothing is timed"));

  // One thread per worker: each problem's measurement holds one GPU.
  std::vector<ProblemOutcome> outcomes(sel.problems.size());
  std::atomic<size_t> next{0};
  std::mutex print_mu;
  auto work = [&] {
    for (size_t i = next++; i < sel.problems.size(); i = next++) {
      const collect::SuiteProblem& p = sel.problems[i];
      ProblemOutcome& o = outcomes[i];
      EvaluationSession session(pool);
      if (auto err = session.open(p.path)) {
        o.failure = fmt::format("{}: {}", err->result.reason, err->result.message);
      } else {
        const int64_t footprint = footprint_bytes(session.spec());
        if (device.available && footprint * kMemoryPerFootprint > device.memory_bytes) {
          o.failure = fmt::format("does_not_fit: footprint {} (x{} = {}) exceeds the GPU's {}", format_bytes(static_cast<double>(footprint)),
                                  kMemoryPerFootprint, format_bytes(static_cast<double>(footprint * kMemoryPerFootprint)),
                                  format_bytes(static_cast<double>(device.memory_bytes)));
        } else if (device.available) {
          const auto t = session.baselines();
          if (!t || !t->eager) o.failure = "reference_failed: the reference did not run (see the worker log)";
          o.row = collect::baseline_row(p, t, settings.options.compiled_baseline);
          (*o.row)["footprint_bytes"] = footprint;
        } else {
          o.row = collect::baseline_row(p, std::nullopt, settings.options.compiled_baseline);
          (*o.row)["footprint_bytes"] = footprint;
        }
      }
      if (a.quiet) continue;
      std::lock_guard lock(print_mu);
      if (!o.failure.empty()) std::cout << fmt::format("{:<44} cannot run: {}\n", p.name, o.failure);
      else if (o.row && !(*o.row)["eager_ms"].is_null())
        std::cout << fmt::format("{:<44} eager {:>10.4f} ms  compile {:>10} ms  {}\n", p.name, (*o.row)["eager_ms"].get<double>(),
                                 (*o.row)["compiled_ms"].is_null() ? std::string("-")
                                                                   : fmt::format("{:.4f}", (*o.row)["compiled_ms"].get<double>()),
                                 (*o.row)["contention"].get<std::string>());
      else std::cout << fmt::format("{:<44} loads ({} footprint)\n", p.name, format_bytes((*o.row)["footprint_bytes"].get<double>()));
    }
  };
  {
    std::vector<std::jthread> threads;
    for (size_t t = 1; t < std::min(pool->size(), sel.problems.size()); ++t) threads.emplace_back(work);
    work();
  }

  std::vector<json> rows;
  json failures = json::array();
  int shared = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].row) {
      shared += (*outcomes[i].row)["contention"] == "shared";
      rows.push_back(*outcomes[i].row);
    }
    if (!outcomes[i].failure.empty()) failures.push_back({{"problem", sel.problems[i].name}, {"reason", outcomes[i].failure}});
  }
  const std::string torch = device.available ? device.torch_version : traj::Versions::from_build().torch;
  json table = collect::baselines_table(device.available ? device.name : "", torch, std::move(rows));
  table["suite"] = sel.suite.root;
  table["failures"] = failures;
  table["created_at"] = traj::now_iso8601();
  const std::string stem = collect::baselines_file_stem(device.available ? device.name : "", torch);
  const fs::path json_file = fs::path(a.out) / (stem + ".json"), csv_file = fs::path(a.out) / (stem + ".csv");
  fs::create_directories(a.out);
  write_file_atomic(json_file, dump_json(table, 2) + "\n");
  write_file_atomic(csv_file, collect::baselines_csv(table));
  if (!a.quiet)
    std::cout << fmt::format("baselines {} problem(s), {} cannot run, {} timed on a shared GPU\ntable     {} (and {})\n",
                             sel.problems.size(), failures.size(), shared, json_file.string(), csv_file.filename().string());
  if (!failures.empty()) {
    std::string names;
    for (size_t i = 0; i < failures.size() && i < 5; ++i)
      names += (i ? "; " : "") + failures[i]["problem"].get<std::string>() + " (" +
               failures[i]["reason"].get<std::string>().substr(0, 160) + ")";
    if (failures.size() > 5) names += fmt::format("; and {} more", failures.size() - 5);
    return fail(baselines_exit::kProblemErrors, fmt::format("{} of {} problem(s) cannot run: {}", failures.size(),
                                                            sel.problems.size(), names));
  }
  if (shared > 0)
    return fail(baselines_exit::kShared, fmt::format("{} problem(s) were timed while another process used the GPU: "
                                                     "not trusted, not cached; run again on an idle GPU",
                                                     shared));
  return device.available ? baselines_exit::kMeasured : baselines_exit::kNoGpu;
}

}  // namespace

Command add_baselines_command(CLI::App& app) {
  auto a = std::make_shared<BaselinesArgs>();
  CLI::App* sub = app.add_subcommand(
      "baselines", "Time eager and torch.compile for every problem of a suite, once per GPU model and torch version");
  add_suite_flags(*sub, a->suite, /*shards=*/false);
  sub->add_option("-o,--out", a->out, "folder of the table (default ./baselines): <GPU>-torch<version>.json and .csv");
  sub->add_flag("-q,--quiet", a->quiet, "print only errors");
  add_eval_flags(*sub, a->eval, /*several_gpus=*/true);
  return Command{sub, [a] {
                   if (a->suite.suite.empty()) {
                     std::cerr << "kagent baselines: error: give a suite (a folder of problem files or a list file)\n";
                     return baselines_exit::kUsage;
                   }
                   try {
                     return run_baselines(*a);
                   } catch (const std::exception& e) {
                     print_error("baselines", std::string("internal: ") + e.what());
                     return baselines_exit::kInternal;
                   }
                 }};
}

}  // namespace kagent::cli
