// ServerMetrics::prometheus: the GPU's timing lock by mode, one series per GPU and mode.
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
