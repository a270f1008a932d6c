#include "serve/server_metrics.h"

#include <fmt/format.h>

namespace kagent::serve {

void ServerMetrics::count_request(const std::string& route, int status) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
}

void ServerMetrics::observe(const std::string& kind, double seconds) {
  std::lock_guard lock(mu_);
  auto& h = latency_[kind];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.counts[i];
  ++h.count;
  h.sum += seconds;
}

std::string ServerMetrics::prometheus(const PoolCounters& pool, const QueueState& q) const {
  std::lock_guard lock(mu_);
  const double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string s;
  s += "# HELP kagent_serve_ready 1 once every worker started\n# TYPE kagent_serve_ready gauge\n";
  s += fmt::format("kagent_serve_ready {}\n", q.ready ? 1 : 0);
  s += "# HELP kagent_serve_requests_total HTTP requests by route and status\n# TYPE kagent_serve_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    s += fmt::format("kagent_serve_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, n);
  s += "# HELP kagent_serve_admitted evaluations admitted now (running, compiling or waiting for a worker)\n"
       "# TYPE kagent_serve_admitted gauge\n";
  s += fmt::format("kagent_serve_admitted {}\nkagent_serve_queue_limit {}\n", q.admitted, q.limit);
  s += "# TYPE kagent_serve_async_queued gauge\n";
  s += fmt::format("kagent_serve_async_queued {}\n", q.async_queued);
  s += "# TYPE kagent_serve_episodes_open gauge\n";
  s += fmt::format("kagent_serve_episodes_open {}\n", q.episodes_open);
  s += "# HELP kagent_serve_evaluations_total evaluations answered by the workers\n# TYPE kagent_serve_evaluations_total counter\n";
  s += fmt::format("kagent_serve_evaluations_total {}\nkagent_serve_compiles_total {}\n", pool.evaluations, pool.compiles);
  s += "# HELP kagent_serve_evaluations_per_second since the server started\n# TYPE kagent_serve_evaluations_per_second gauge\n";
  s += fmt::format("kagent_serve_evaluations_per_second {:.4f}\n", up > 0 ? static_cast<double>(pool.evaluations) / up : 0.0);
  s += "# HELP kagent_serve_gpu_busy_ratio share of the uptime the workers spent evaluating (over all workers)\n"
       "# TYPE kagent_serve_gpu_busy_ratio gauge\n";
  const double busy = up > 0 && q.workers > 0 ? pool.worker_busy_seconds / (up * static_cast<double>(q.workers)) : 0.0;
  s += fmt::format("kagent_serve_gpu_busy_seconds_total {:.3f}\nkagent_serve_gpu_busy_ratio {:.4f}\nkagent_serve_workers {}\n",
                   pool.worker_busy_seconds, busy, q.workers);
  // Where the workers' time went, summed over them: evaluating (as gpu_busy_seconds), held for
  // any request (problem loads too), loading problems, and free while a request waited for one
  // (none, when the pool's rule works); and how often one was started afresh. Beside the lock's
  // seconds, what tells an idle node from a busy one.
  double held = 0, loads = 0, idle_queued = 0;
  int restarts = 0;
  for (const auto& w : pool.workers) {
    held += w.held_seconds;
    loads += w.load_seconds;
    idle_queued += w.idle_while_queued_seconds;
    restarts += w.restarts;
  }
  s += "# HELP kagent_serve_worker_seconds_total the workers' seconds, summed, by what they did\n"
       "# TYPE kagent_serve_worker_seconds_total counter\n";
  s += fmt::format("kagent_serve_worker_seconds_total{{state=\"evaluating\"}} {:.3f}\n", pool.worker_busy_seconds);
  s += fmt::format("kagent_serve_worker_seconds_total{{state=\"held\"}} {:.3f}\n", held);
  s += fmt::format("kagent_serve_worker_seconds_total{{state=\"loading\"}} {:.3f}\n", loads);
  s += fmt::format("kagent_serve_worker_seconds_total{{state=\"idle_while_queued\"}} {:.3f}\n", idle_queued);
  s += "# TYPE kagent_serve_worker_restarts_total counter\n";
  s += fmt::format("kagent_serve_worker_restarts_total {}\n", restarts);
  s += "# HELP kagent_serve_compiling KernelBench answers compiling now, and waiting for a compile slot\n"
       "# TYPE kagent_serve_compiling gauge\n";
  s += fmt::format("kagent_serve_compiling {}\nkagent_serve_compile_waiting {}\n", pool.compiling, pool.compile_waiting);
  // The draw process (evaluation/draw_ahead.h): without these a trainer cannot tell whether the
  // problems' inputs came from it or from each worker, or that it ended.
  s += "# HELP kagent_serve_draws_total problems named to the draw process, by what it did with them\n"
       "# TYPE kagent_serve_draws_total counter\n";
  for (const auto& [what, n] : {std::pair{"asked", pool.draws.asked}, std::pair{"drawn", pool.draws.drawn},
                                std::pair{"kept", pool.draws.kept}, std::pair{"skipped", pool.draws.skipped}})
    s += fmt::format("kagent_serve_draws_total{{what=\"{}\"}} {}\n", what, n);
  s += "# HELP kagent_serve_draw_processes draw processes up now\n# TYPE kagent_serve_draw_processes gauge\n";
  s += fmt::format("kagent_serve_draw_processes {}\n", pool.draws.running);
  // How each GPU's timing lock was held (evaluation/gpu_lock_usage.h): the GPU's busy time as the
  // workers used it, exclusive for timings, shared for loads and checks; free, by nobody.
  s += "# HELP kagent_serve_gpu_lock_seconds_total seconds each GPU's timing lock was held, by mode\n"
       "# TYPE kagent_serve_gpu_lock_seconds_total counter\n";
  for (const auto& g : pool.gpu_locks)
    for (const auto& [mode, seconds] : {std::pair{"exclusive", g.lock.exclusive_seconds},
                                        std::pair{"shared", g.lock.shared_seconds},
                                        std::pair{"free", g.lock.free_seconds}})
      s += fmt::format("kagent_serve_gpu_lock_seconds_total{{gpu=\"{}\",mode=\"{}\"}} {:.3f}\n", g.gpu, mode, seconds);
  for (const auto& [kind, h] : latency_) {
    const std::string name = "kagent_serve_" + kind + "_seconds";
    s += fmt::format("# HELP {} latency of {} requests\n# TYPE {} histogram\n", name, kind, name);
    for (size_t i = 0; i < kBuckets.size(); ++i) s += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, kBuckets[i], h.counts[i]);
    s += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {:.6f}\n{}_count {}\n", name, h.count, name, h.sum, name, h.count);
  }
  return s;
}

}  // namespace kagent::serve
