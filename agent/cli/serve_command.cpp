#include "cli/serve_command.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <atomic>
#include <thread>

#include <fmt/format.h>

#include "cli/errors.h"
#include "cli/eval_flags.h"
#include "cli/flag_checks.h"
#include "cli/listen_address.h"
#include "rollout/reward_preset.h"
#include "serve/redis_url.h"

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
#ifdef KAGENT_WITH_QUEUE
#include <unistd.h>

#include <random>

#include "serve/queue/job_queue.h"
#include "serve/queue/node_heartbeat.h"
#include "serve/queue/node_room.h"
#include "serve/queue/queue_worker.h"
#endif

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

// serve's --speedup-rounds: 5 paired rounds give a 94% interval, and their geometric mean
// repeated within 1.05 for 27 of 30 real answers evaluated 5 times (H200; docs/serve.md).
constexpr int kServeSpeedupRounds = 5;

struct ServeArgs {
  std::string host = "127.0.0.1", token, data = "serve-data", problems, prompts_dir, reward = "kevin", format = "cuda";
  int port = 8000, max_turns = 4, queue = 256, threads = 128, workers_per_gpu = 0;  // 0: EvaluationPool's default_workers_per_gpu
  double max_body_mb = 8;
  bool compile_only = false;
  // --queue: a number (the admission bound above) or redis://HOST:PORT, the cluster's queue.
  std::string queue_flag;
  std::string queue_url;
  int queue_reclaim_s = 15, queue_retry_s = 30, queue_max_attempts = 3, queue_consumers = 0;
  bool front_only = false;
  int stop_grace_s = 30;  // Slurm's KillWait default: what a scheduler allows between SIGTERM and SIGKILL
  EvalFlags eval;
};

// --queue takes the admission bound (a whole number, as before the cluster queue existed) or the
// cluster's Redis URL; the flag's check says which it is not.
CLI::Validator queue_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.find("://") != std::string::npos || s.rfind("redis", 0) == 0) {
          std::string why;
          if (!serve::parse_redis_url(s, &why)) return fmt::format("'{}' is not a redis://HOST:PORT URL: {}", s, why);
          return {};
        }
        std::string number = s;
        const std::string err = whole_number(1)(number);
        if (err.find("is not a number") != std::string::npos)
          return fmt::format("'{}' is neither a number nor a redis://HOST:PORT URL", s);
        return err;
      },
      "");
}

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

#ifdef KAGENT_WITH_QUEUE
std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

// This node's name on the cluster, kept in DATA/queue_node: a restart on the same --data is the
// same node (its episodes' steps keep their job keys; it is no longer counted lost).
std::string node_name(const fs::path& data) {
  const fs::path file = data / "queue_node";
  std::error_code ec;
  if (fs::exists(file, ec)) {
    std::string name = read_file(file);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    if (!name.empty()) return name;
  }
  std::mt19937_64 rng{std::random_device{}()};
  const std::string name = fmt::format("{}-{:08x}", hostname(), static_cast<uint32_t>(rng()));
  write_file_atomic(file, name + "\n");
  return name;
}
#endif

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
#ifdef KAGENT_WITH_QUEUE
  // The cluster queue: reached now, before any worker starts, so a wrong --queue is one line.
  std::unique_ptr<serve::JobQueue> queue;
  const std::string node = a.queue_url.empty() ? "" : node_name(data);
  if (!a.queue_url.empty()) {
    serve::QueueOptions qo;
    qo.url = *serve::parse_redis_url(a.queue_url);
    qo.node = node;
    qo.retry = std::chrono::seconds(a.queue_retry_s);
    queue = std::make_unique<serve::JobQueue>(qo);
    try {
      queue->open();
    } catch (const std::exception& e) {
      print_error("serve", fmt::format("--queue {}: cannot use the cluster's Redis: {}", a.queue_url, e.what()));
      return serve_exit::kQueueUnreachable;
    }
  }
#else
  const std::string node;  // no cluster: no node name scopes the episodes' job keys
  if (!a.queue_url.empty()) {
    print_error("serve", "--queue " + a.queue_url +
                             ": this kagent was built without hiredis (apt-get install libhiredis-dev, then build it again)");
    return serve_exit::kUnavailable;
  }
#endif
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
#ifdef KAGENT_WITH_QUEUE
  // With --queue every evaluation (steps, evaluations, rewards) becomes a job any node's workers
  // may take; this node's own pool serves the queue through its consumers.
  std::unique_ptr<serve::NodeRoom> room;  // before the worker that asks it: it outlives it
  std::unique_ptr<serve::QueueWorker> worker;
  if (queue) {
    sessions.send_to([q = queue.get()](const std::string& problem, const std::string& code_file, prompt::AnswerFormat f,
                                       const std::string& key) { return q->evaluate(problem, code_file, f, key); });
    serve::WorkerOptions wo;
    wo.url = queue->options().url;
    wo.node = node;
    // A job for each compile slot and each worker: every slot compiles while the workers
    // evaluate, as without --queue. Fewer (twice the workers, before) left a 16-core node's
    // compilers half idle: 31 answers a minute where collect makes 60. No more: a job a node has
    // taken waits there, and jobs left on the stream go to whichever node is free first.
    wo.consumers = a.front_only           ? 0
                   : a.queue_consumers > 0 ? static_cast<size_t>(a.queue_consumers)
                                           : std::max<size_t>(2, pool->size() + pool->compile_slots());
    // Consumers beyond the workers build the next answers, but a node holds only as many as keep
    // its workers fed (serve/queue/node_room.h); the rest stay on the stream for whichever node
    // runs out first. A job per free consumer let each node of a lock-bound pair hold 12 beyond
    // its workers (H200 x2, 100 leaderboard answers: about 15 s of work each), and one node's GPU
    // stood free 12.7 s of the batch's 80 s, the other's 3.7 s.
    if (!a.compile_only) {
      room = std::make_unique<serve::NodeRoom>(pool->size(), pool->compile_slots());
      wo.may_take = [r = room.get(), p = pool.get()](size_t held) { return r->has_room(held, p->leased()); };
      wo.done = [r = room.get()](const serve::QueueResult& q) {
        if (q.result) r->finished(q.result->compile ? q.result->compile->seconds : 0.0, q.result->eval_seconds);
      };
    }
    wo.reclaim_idle = std::chrono::seconds(a.queue_reclaim_s);
    wo.max_attempts = a.queue_max_attempts;
    wo.dir = data / "queue";
    worker = std::make_unique<serve::QueueWorker>(wo, sessions);
  }
#endif
  serve::Admission admission(static_cast<size_t>(a.queue));
  serve::ServerMetrics metrics;
  const auto format = prompt::answer_format_from_string(a.format);
  serve::Episodes episodes(*store, *tasks, sessions, admission, {a.max_turns, 64, preset, format, node});
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
#ifdef KAGENT_WITH_QUEUE
  std::unique_ptr<serve::NodeHeartbeat> heartbeat;
  if (queue) {
    state.degraded = [&]() -> std::optional<serve::ApiError> {
      const auto s = heartbeat->snapshot();
      if (s.reachable) return std::nullopt;
      return serve::ApiError(503, "degraded",
                             fmt::format("the cluster's queue ({}) cannot be reached: requests wait for it up to {} s ({})",
                                         a.queue_url, a.queue_retry_s, s.error),
                             5);
    };
    state.extra_metrics = [&] { return heartbeat->prometheus(); };
    state.health = [&, local = state.health] {
      json h = local();
      h["queue"] = heartbeat->health_json();
      return h;
    };
  }
#endif
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
#ifdef KAGENT_WITH_QUEUE
  if (queue) {
    // Its heartbeat names the URL the node serves: a name others can reach where it listens on all.
    const std::string where = a.host == "0.0.0.0" || a.host == "::" ? hostname() : a.host;
    heartbeat = std::make_unique<serve::NodeHeartbeat>(queue->options().url, node, fmt::format("http://{}:{}", where, port),
                                                       std::chrono::seconds(std::max(3, a.queue_reclaim_s)), *queue,
                                                       worker.get());
    heartbeat->start();
  }
#endif
  // Each worker loads one of the suite's problems and runs it once before the node says it is
  // ready (and, with --queue, takes jobs): its CUDA libraries' handles, its first kernels' modules
  // and the profiler's setup (exclusive, 0.5 s on an H200) are paid at start, not by the first
  // batch, where every worker's first evaluation paid them at once. Not without a GPU. Where
  // torch.compile's baselines are timed, it runs once too: a process's first torch.compile
  // imports inductor and sets up Triton, seconds that landed in every worker's first evaluation.
  pool->start(a.compile_only ? std::string() : tasks->any_path(), pool->settings().options.compiled_baseline);
  std::thread starter([&] {
    auto started = pool->started();
    if (auto* err = std::get_if<WorkerError>(&started)) {
      start_error = err->message;
      failed = true;
      std::cerr << "kagent serve: error: the workers could not start: " << start_error << "\n";
      return;
    }
    ready = true;
#ifdef KAGENT_WITH_QUEUE
    if (worker) worker->start();  // jobs only once this node's workers can run them
#endif
    if (!a.compile_only && !std::get<DeviceInfo>(started).available)
      std::cerr << "kagent serve: error: no CUDA device is visible to the workers: /health and every evaluation answer 503 "
                   "no_gpu (--compile-only checks answers without a GPU)\n";
  });
  write_file_atomic(data / "server.json", json{{"host", a.host}, {"port", port}, {"pid", ::getpid()}}.dump() + "\n");
  std::cout << fmt::format("kagent serve: listening on http://{}:{} ({} worker(s){}; data {})", a.host, port, pool->size(),
                           a.compile_only ? ", compile only" : "", data.string())
            << std::endl;
  // Shared with the grace's thread, which is detached and may wake after this function returned.
  const auto served = std::make_shared<std::atomic<bool>>(false);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (*served) return;  // woken below: serving ended by itself
    // The stop is bounded: what is in flight may finish within --stop-grace seconds; a second
    // signal, or the grace's end, ends the process at once. Its workers die with it; a cluster's
    // unfinished jobs are reclaimed by other nodes (--queue-reclaim-s), as after kill -9.
    std::thread([stop_signals, served, grace = a.stop_grace_s] {
      const timespec wait{grace, 0};
      siginfo_t info{};
      const bool again = sigtimedwait(&stop_signals, &info, &wait) > 0;
      if (*served) return;
      std::cerr << fmt::format("kagent serve: stopped before its work in flight finished ({}): what it had taken is "
                               "left unanswered\n",
                               again ? "a second signal" : fmt::format("--stop-grace {} s ran out", grace));
      std::_Exit(serve_exit::kStoppedCut);
    }).detach();
#ifdef KAGENT_WITH_QUEUE
    if (queue) queue->stop();  // requests waiting for the cluster answer 503 now, so serving can end
#endif
    server.stop();
  });
  const bool ok = server.serve();
  // Served to the end: wake the signal thread if serving stopped by itself.
  *served = true;
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  starter.join();
#ifdef KAGENT_WITH_QUEUE
  if (queue) {
    queue->stop();
    worker->stop();     // each consumer finishes its job and stores the result
    heartbeat->stop();  // a clean stop: the node leaves the cluster, not counted lost
  }
#endif
  return ok ? serve_exit::kStopped : serve_exit::kInternal;
}
#endif

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  // A reward must repeat: the paired rounds' geometric mean does (reward_preset.h), the timing's
  // speedup alone does not for kernels of a few microseconds.
  a->eval.speedup_rounds = kServeSpeedupRounds;
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
  sub->add_option("--queue", a->queue_flag,
                  "evaluations admitted at once, more get 429 (default 256); or redis://HOST:PORT: the queue every node "
                  "of a cluster shares (docs/serve.md, Several machines)")
      ->check(queue_value());
  sub->add_option("--queue-reclaim-s", a->queue_reclaim_s,
                  "with --queue redis://: a job a dead node had taken runs elsewhere after this many idle seconds")
      ->capture_default_str()->check(whole_number(1, 3600));
  sub->add_option("--queue-max-attempts", a->queue_max_attempts,
                  "with --queue redis://: nodes that may take one job in turn; a job every one of them died on is "
                  "answered job_abandoned (500), not run again")
      ->capture_default_str()->check(whole_number(1, 100));
  sub->add_option("--queue-retry-s", a->queue_retry_s,
                  "with --queue redis://: how long a request waits for an unreachable Redis before 503")
      ->capture_default_str()->check(whole_number(1, 3600));
  sub->add_option("--queue-consumers", a->queue_consumers,
                  "with --queue redis://: jobs this node takes at once (0, the default: its compile slots plus its "
                  "workers; fewer leaves more of a batch's last jobs to the other nodes)")
      ->capture_default_str()->check(whole_number(0, 4096));
  sub->add_flag("--front-only", a->front_only, "with --queue redis://: take requests, run no jobs (other nodes' workers do)");
  sub->add_option("--stop-grace", a->stop_grace_s,
                  "seconds a SIGINT/SIGTERM leaves the work in flight to finish; then, or at a second signal, the server "
                  "ends at once (exit 16)")
      ->capture_default_str()->check(whole_number(0, 86400));
  sub->add_option("--threads", a->threads, "connections served at once")->capture_default_str()->check(whole_number(4, 4096));
  sub->add_option("--max-body-mb", a->max_body_mb, "request body limit in MiB (413 past it)")->capture_default_str()->check(number_from(0, /*above=*/true));
  sub->add_option("--prompts", a->prompts_dir, "prompt templates folder (default: the repository's prompts/)");
  sub->add_option("--format", a->format,
                  "answer format of requests that name none: cuda | kernelbench (OpenRLHF's /v1/reward sends no format)")
      ->capture_default_str()->check(one_of({"cuda", "kernelbench"}));
  sub->add_flag("--compile-only", a->compile_only,
                "compile and check answers, never run them (no GPU; CI, CPU nodes; one worker per GPU index)");
  add_eval_flags(*sub, a->eval, /*several_gpus=*/true);
  sub->get_option("--speedup-rounds")
      ->description(fmt::format("paired rounds of eager and the candidate after the timing, for a candidate under 1 ms, "
                                "whose geometric mean the rewards read (0: none; else 2 to 20; default {})",
                                kServeSpeedupRounds));
  add_workers_per_gpu_flag(*sub, a->workers_per_gpu);
  // The pool puts --workers-per-gpu workers on each index (EvaluationPool), not one.
  sub->get_option("--gpus")->description(
      "GPU indices; --workers-per-gpu workers on each (default: the default GPU; under --compile-only one worker "
      "per index, with no GPU used)");
  return Command{sub, [a]() -> int {
                   if (!a->queue_flag.empty()) {
                     if (a->queue_flag.find("://") != std::string::npos) a->queue_url = a->queue_flag;
                     else a->queue = std::stoi(a->queue_flag);
                   }
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
