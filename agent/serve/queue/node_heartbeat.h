// This node's part in the cluster's picture (kagent serve --queue): every second it writes its
// heartbeat, a Redis hash with a TTL (its URL and counters), re-claims the jobs its consumers are
// running (which resets their idle time, so only a dead node's jobs are reclaimed), and reads
// the cluster back: the stream's depth, the jobs running, every node alive with its counters,
// and the nodes lost (joined, and their heartbeat expired without a clean stop). /health and
// /metrics read that snapshot, never Redis, so they answer at once while Redis is down:
// `reachable` false is /health's `degraded`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/queue/job_queue.h"
#include "serve/queue/queue_worker.h"

namespace kagent::serve {

struct NodeStatus {
  std::string name, url;
  int64_t jobs = 0, reclaimed = 0, submitted = 0, wait_ms_sum = 0, wait_count = 0, consumers = 0, running = 0;
  double uptime_s = 0;
  double jobs_per_second() const { return static_cast<double>(jobs) / uptime_s; }
  double wait_seconds_avg() const { return mean_seconds(wait_ms_sum, wait_count); }
  // The mean of `count` waits summing `ms_sum` milliseconds, in seconds; 0 with none.
  static double mean_seconds(int64_t ms_sum, int64_t count) {
    return count ? static_cast<double>(ms_sum) / 1000.0 / static_cast<double>(count) : 0.0;
  }
};

struct ClusterSnapshot {
  bool reachable = false;
  std::string error;           // why not, when not
  int64_t depth = 0;           // jobs in the stream: waiting or running
  int64_t running = 0;         // claimed by a consumer, not yet acknowledged
  std::vector<NodeStatus> alive;
  std::vector<std::string> lost;
};

class NodeHeartbeat {
 public:
  // `ttl`: a node whose heartbeat is older is lost. `worker` may be null (a front-only node).
  NodeHeartbeat(RedisUrl url, std::string node, std::string http_url, std::chrono::milliseconds ttl, JobQueue& front,
                const QueueWorker* worker);
  ~NodeHeartbeat();
  NodeHeartbeat(const NodeHeartbeat&) = delete;
  NodeHeartbeat& operator=(const NodeHeartbeat&) = delete;

  void start();
  // Ends the beats and takes this node out of the cluster (a clean stop is no node lost).
  void stop();

  ClusterSnapshot snapshot() const;
  // /health's "queue" object and /metrics' kagent_queue_* and kagent_cluster_* lines.
  nlohmann::json health_json() const;
  std::string prometheus() const;

 private:
  void beat(RedisConnection& conn);
  void loop();

  RedisUrl url_;
  std::string node_, http_url_;
  std::chrono::milliseconds ttl_;
  JobQueue& front_;
  const QueueWorker* worker_;
  int64_t started_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  ClusterSnapshot snap_;
  std::thread thread_;
};

}  // namespace kagent::serve
