#include "cli/serve_command.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/errors.h"
#include "cli/eval_flags.h"
#include "cli/flag_checks.h"
#include "cli/listen_address.h"
#include "rollout/reward_preset.h"

#ifdef KAGENT_WITH_SERVE
#include <pthread.h>

#include "build_info.h"
#include "common/files.h"
#include "serve/api_error.h"
#include "serve/api_schema.h"
#include "serve/data_lock.h"
#include "serve/http_server.h"
#include "serve/machine_gpus.h"
#endif

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct ServeArgs {
  std::string host = "127.0.0.1", token, data = "serve-data", problems, prompts_dir, reward = "kevin", format = "cuda";
  int port = 8000, max_turns = 4, queue = 256, threads = 128, workers_per_gpu = 0;  // 0: EvaluationPool's default_workers_per_gpu
  double max_body_mb = 8;
  bool compile_only = false;
  EvalFlags eval;
};

#ifdef KAGENT_WITH_SERVE
// Every template the server renders, read now: a wrong --prompts is one error at start-up, not
// a 422 on every episode.
void check_prompts(const prompt::PromptBuilder& prompts) {
  for (const char* name : {"system_cuda", "system_kernelbench", "task", "feedback", "format_error"})
    (void)prompts.templates().text(name);
}

// What the command line names is checked before anything starts; throws the one line to print.
void check_start_up(const ServeArgs& a) {
  if (!a.prompts_dir.empty() && !fs::is_directory(a.prompts_dir))
    throw std::runtime_error(fmt::format("--prompts {}: no such folder", a.prompts_dir));
  if (!a.compile_only && !a.eval.gpus.empty())
    if (auto why = serve::gpu_indices_problem(a.eval.gpus, serve::machine_gpu_count()))
      throw std::runtime_error("--gpus " + *why);
}

int run_serve(ServeArgs a) {
  using nlohmann::json;
  if (a.token.empty())
    if (const char* t = std::getenv("KAGENT_SERVE_TOKEN")) a.token = t;
  // Signals are waited for on one thread; every other thread (httplib's, the pool's) blocks them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const fs::path data = fs::absolute(a.data);
  std::unique_ptr<serve::TaskSource> tasks;
  std::unique_ptr<serve::EpisodeStore> store;
  std::unique_ptr<serve::DataLock> data_lock;  // held to the end: one server per --data folder
  prompt::PromptBuilder prompts(a.prompts_dir);
  try {
    check_start_up(a);
    try {
      check_prompts(prompts);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--prompts {}: {}", a.prompts_dir.empty() ? prompt::default_prompts_dir().string()
                                                                                      : a.prompts_dir,
                                           e.what()));
    }
    try {
      fs::create_directories(data);
      data_lock = std::make_unique<serve::DataLock>(data);
      store = std::make_unique<serve::EpisodeStore>(data);
    } catch (const serve::DataInUse& e) {
      print_error("serve", fmt::format("--data {}: {}", a.data, e.what()));
      return serve_exit::kDataInUse;
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--data {}: {}", a.data, e.what()));
    }
    try {
      tasks = std::make_unique<serve::TaskSource>(a.problems, data);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--problems {}: {}", a.problems, e.what()));
    }
  } catch (const std::exception& e) {
    print_error("serve", e.what());
    return serve_exit::kBadInput;
  }
  // The reward preset names the policy it rewards under (strict for every preset: an RL reward
  // comes from the model's own kernels); --policy replaces it, and the workers' verdicts follow.
  auto preset = rollout::reward_preset(a.reward);
  if (a.eval.policy) preset.policy = policy_from_string(*a.eval.policy);
  EvaluationSettings settings = evaluation_settings(a.eval, preset.policy);
  settings.hide_gpus = a.compile_only;
  settings.workers_per_gpu = a.workers_per_gpu;  // 0: the pool's default
  // Episodes choose their format; most RL recipes' answers are load_inline ones. Built once per
  // machine, a no-op where the cache has them; not for --compile-only (tests, CPU-only checks).
  settings.prepare_inline_headers = !a.compile_only;
  auto pool = std::make_shared<EvaluationPool>(settings);
  serve::ProblemSessions sessions(pool, prompts, a.compile_only);
  serve::Admission admission(static_cast<size_t>(a.queue));
  serve::ServerMetrics metrics;
  const auto format = prompt::answer_format_from_string(a.format);
  serve::Episodes episodes(*store, *tasks, sessions, admission, {a.max_turns, 64, preset, format});
  for (const auto& w : episodes.load()) std::cerr << "kagent serve: warning: episode " << w << "\n";
  serve::Evaluations evaluations(*tasks, sessions, admission, data, preset, format, std::max<size_t>(2, pool->size() * 2));

  std::atomic<bool> ready{false}, failed{false};
  std::string start_error;  // written once, before `failed`
  serve::ServerState state;
  state.unavailable = [&]() -> std::optional<serve::ApiError> {
    if (!ready) {
      if (failed)
        return serve::ApiError(503, "workers_failed", "the server's workers could not start: " + start_error);
      return serve::ApiError(503, "starting", "the server's workers are starting; retry", 5);
    }
    if (!a.compile_only && !pool->device().available) return serve::no_gpu_error();
    return std::nullopt;
  };
  state.health = [&] {
    const auto d = ready ? pool->device() : DeviceInfo{};
    return json{{"workers", pool->size()}, {"device", d.available ? d.name : "none"}, {"compile_only", a.compile_only},
                {"episodes_open", episodes.open_count()}, {"tasks", tasks->size()}, {"version", build::kVersion},
                {"error", nullptr}};
  };
  state.queue = [&] {
    return serve::QueueState{admission.admitted(), admission.limit(), evaluations.queued(), episodes.open_count(), pool->size(),
                             ready.load()};
  };
  state.pool = [&] { return pool->counters(); };
  state.schema = serve::api_schema(static_cast<size_t>(a.max_body_mb * (1 << 20)), settings.timeout_s);
  serve::HttpServer server({a.host, a.port, a.token, static_cast<size_t>(a.max_body_mb * (1 << 20)), static_cast<size_t>(a.threads)},
                           episodes, evaluations, metrics, std::move(state));
  // The port before the workers: a port in use ends here, in a second, with nothing started.
  if (auto why = listen_address_problem(a.host)) {
    print_error("serve", "--host " + *why);
    return serve_exit::kCannotListen;
  }
  int port = 0;
  try {
    port = server.bind();
  } catch (const std::exception& e) {
    print_error("serve", e.what());
    return serve_exit::kCannotListen;
  }
  pool->start();
  std::thread starter([&] {
    auto started = pool->started();
    if (auto* err = std::get_if<WorkerError>(&started)) {
      start_error = err->message;
      failed = true;
      std::cerr << "kagent serve: error: the workers could not start: " << start_error << "\n";
      return;
    }
    ready = true;
    if (!a.compile_only && !std::get<DeviceInfo>(started).available)
      std::cerr << "kagent serve: error: no CUDA device is visible to the workers: /health and every evaluation answer 503 "
                   "no_gpu (--compile-only checks answers without a GPU)\n";
  });
  write_file_atomic(data / "server.json", json{{"host", a.host}, {"port", port}, {"pid", ::getpid()}}.dump() + "\n");
  std::cout << fmt::format("kagent serve: listening on http://{}:{} ({} worker(s){}; data {})", a.host, port, pool->size(),
                           a.compile_only ? ", compile only" : "", data.string())
            << std::endl;
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
  });
  const bool ok = server.serve();
  // Served to the end: wake the signal thread if serving stopped by itself.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  starter.join();
  return ok ? serve_exit::kStopped : serve_exit::kInternal;
}
#endif

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand("serve", "Serve kagent as an HTTP environment for RL trainers");
  sub->add_option("--data", a->data, "folder for episodes and evaluations (a restart on it keeps them)")->capture_default_str();
  sub->add_option("--problems", a->problems,
                  "suite root (e.g. KernelBench) whose problems task_id names (its .py files defining Model, get_inputs, "
                  "get_init_inputs)");
  sub->add_option("--host", a->host, "address to listen on")->capture_default_str();
  sub->add_option("--port", a->port, "port (0: any free one; the chosen one is printed and in DATA/server.json)")
      ->capture_default_str()->check(whole_number(0, 65535));
  sub->add_option("--token", a->token, "bearer token every route but /health requires (default: $KAGENT_SERVE_TOKEN)");
  sub->add_option("--reward", a->reward, "default reward preset")->capture_default_str()->check(one_of(rollout::reward_preset_names()));
  sub->add_option("--max-turns", a->max_turns, "default turns per episode")->capture_default_str()->check(whole_number(1, 64));
  sub->add_option("--queue", a->queue, "evaluations admitted at once; more get 429")->capture_default_str()->check(whole_number(1));
  sub->add_option("--threads", a->threads, "connections served at once")->capture_default_str()->check(whole_number(4, 4096));
  sub->add_option("--max-body-mb", a->max_body_mb, "request body limit in MiB (413 past it)")->capture_default_str()->check(number_from(0, /*above=*/true));
  sub->add_option("--prompts", a->prompts_dir, "prompt templates folder (default: the repository's prompts/)");
  sub->add_option("--format", a->format,
                  "answer format of requests that name none: cuda | kernelbench (OpenRLHF's /v1/reward sends no format)")
      ->capture_default_str()->check(one_of({"cuda", "kernelbench"}));
  sub->add_flag("--compile-only", a->compile_only,
                "compile and check answers, never run them (no GPU; CI, CPU nodes; one worker per GPU index)");
  add_eval_flags(*sub, a->eval, /*several_gpus=*/true);
  add_workers_per_gpu_flag(*sub, a->workers_per_gpu);
  // The pool puts --workers-per-gpu workers on each index (EvaluationPool), not one.
  sub->get_option("--gpus")->description(
      "GPU indices; --workers-per-gpu workers on each (default: the default GPU; under --compile-only one worker "
      "per index, with no GPU used)");
  return Command{sub, [a]() -> int {
#ifdef KAGENT_WITH_SERVE
                   try {
                     return run_serve(*a);
                   } catch (const std::exception& e) {
                     print_error("serve", std::string("internal: ") + e.what());
                     return serve_exit::kInternal;
                   }
#else
                   std::cerr << "kagent serve: error: this kagent was built without cpp-httplib (apt-get install libcpp-httplib-dev)\n";
                   return serve_exit::kUnavailable;
#endif
                 }};
}

}  // namespace kagent::cli
