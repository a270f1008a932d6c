// ServerMetrics::prometheus: the GPU's timing lock by mode, one series per GPU and mode; the workers' seconds.
#include <doctest/doctest.h>

#include <string>

#include "serve/server_metrics.h"

using namespace kagent;

TEST_CASE("/metrics says how each GPU's timing lock was held") {
  serve::ServerMetrics m;
  PoolCounters pool;
  GpuLockCounters g;
  g.gpu = 1;
  g.lock.exclusive_seconds = 12.5;
  g.lock.shared_seconds = 3.25;
  g.lock.free_seconds = 40;
  pool.gpu_locks.push_back(g);
  const std::string text = m.prometheus(pool, serve::QueueState{});
  CHECK(text.find("# TYPE kagent_serve_gpu_lock_seconds_total counter\n") != std::string::npos);
  CHECK(text.find("kagent_serve_gpu_lock_seconds_total{gpu=\"1\",mode=\"exclusive\"} 12.500\n") != std::string::npos);
  CHECK(text.find("kagent_serve_gpu_lock_seconds_total{gpu=\"1\",mode=\"shared\"} 3.250\n") != std::string::npos);
  CHECK(text.find("kagent_serve_gpu_lock_seconds_total{gpu=\"1\",mode=\"free\"} 40.000\n") != std::string::npos);
  // Without GPUs (--compile-only) there are no series.
  CHECK(m.prometheus(PoolCounters{}, serve::QueueState{}).find("gpu_lock_seconds_total{") == std::string::npos);
}

TEST_CASE("/metrics says where the workers' seconds went, summed over them, and their restarts") {
  serve::ServerMetrics m;
  PoolCounters pool;
  pool.worker_busy_seconds = 7.5;
  WorkerCounters a, b;
  a.held_seconds = 6;
  a.load_seconds = 0.5;
  a.idle_while_queued_seconds = 1.25;
  a.restarts = 1;
  b.held_seconds = 4;
  b.load_seconds = 0.25;
  b.restarts = 2;
  pool.workers = {a, b};
  pool.compiling = 3;
  pool.compile_waiting = 1;
  pool.draws.asked = 5;
  pool.draws.drawn = 3;
  pool.draws.skipped = 2;
  pool.draws.running = 1;
  const std::string text = m.prometheus(pool, serve::QueueState{});
  CHECK(text.find("kagent_serve_worker_seconds_total{state=\"evaluating\"} 7.500\n") != std::string::npos);
  CHECK(text.find("kagent_serve_worker_seconds_total{state=\"held\"} 10.000\n") != std::string::npos);
  CHECK(text.find("kagent_serve_worker_seconds_total{state=\"loading\"} 0.750\n") != std::string::npos);
  CHECK(text.find("kagent_serve_worker_seconds_total{state=\"idle_while_queued\"} 1.250\n") != std::string::npos);
  CHECK(text.find("kagent_serve_worker_restarts_total 3\n") != std::string::npos);
  CHECK(text.find("kagent_serve_compiling 3\nkagent_serve_compile_waiting 1\n") != std::string::npos);
  CHECK(text.find("kagent_serve_draws_total{what=\"asked\"} 5\n") != std::string::npos);
  CHECK(text.find("kagent_serve_draws_total{what=\"drawn\"} 3\n") != std::string::npos);
  CHECK(text.find("kagent_serve_draws_total{what=\"kept\"} 0\n") != std::string::npos);
  CHECK(text.find("kagent_serve_draws_total{what=\"skipped\"} 2\n") != std::string::npos);
  CHECK(text.find("kagent_serve_draw_processes 1\n") != std::string::npos);
}
