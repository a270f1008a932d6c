// The worker side of the cluster queue (kagent serve --queue): consumers that pull jobs from the
// shared stream as members of the consumer group (XREADGROUP), evaluate each on this node's own
// pool (its GPU workers; under --compile-only its compile workers), store the result once
// (SET NX: the first result of a key wins, so a job run twice never answers twice differently)
// and acknowledge it. A job a dead node had claimed is taken over (XAUTOCLAIM) once it has been
// idle for `reclaim_idle`; a live node's running jobs are kept from looking idle by the
// heartbeat (NodeHeartbeat re-claims them every second), so a slow evaluation is never stolen.
// A job that every node taking it died on (its delivery count past `max_attempts`) is not run
// again: it is answered `job_abandoned` (500), or one poisonous job would take the cluster's
// nodes down one after another.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "serve/problem_sessions.h"
#include "serve/queue/queue_job.h"
#include "serve/queue/redis_connection.h"
#include "serve/redis_url.h"

namespace kagent::serve {

struct WorkerOptions {
  RedisUrl url;
  std::string node;
  size_t consumers = 2;  // jobs this node takes at once
  std::chrono::milliseconds reclaim_idle{15000};
  int max_attempts = 3;  // nodes that may take one job (XREADGROUP, then each XAUTOCLAIM)
  std::chrono::seconds result_ttl{std::chrono::hours(24)};
  std::filesystem::path dir;  // DATA/queue: the jobs' code, and problems whose file this node lacks
  // Whether this node, holding `held` jobs now, takes another (empty: while a consumer is free;
  // serve's: serve/queue/node_room.h). Asked by one consumer at a time, each job taken counted
  // before the next asks. While it says no, nothing is taken, not even a dead node's job: what
  // this node would only hold is left on the stream for a node whose workers run out first.
  std::function<bool(size_t held)> may_take;
  // Each job this node ran, once its result is stored (serve: NodeRoom::finished).
  std::function<void(const QueueResult&)> done;
};

class QueueWorker {
 public:
  QueueWorker(WorkerOptions options, ProblemSessions& sessions);
  ~QueueWorker();
  QueueWorker(const QueueWorker&) = delete;
  QueueWorker& operator=(const QueueWorker&) = delete;

  // Starts the consumers; call once this node's evaluation workers have started.
  void start();
  // Lets each consumer finish the job it holds, then ends them.
  void stop();

  // (consumer, stream entry id) of each job this node's consumers hold now.
  std::vector<std::pair<std::string, std::string>> running() const;
  struct Counters {
    int64_t jobs = 0, reclaimed = 0, wait_ms_sum = 0, wait_count = 0;
    size_t running = 0, consumers = 0;
  };
  Counters counters() const;

 private:
  void consume(size_t index);
  size_t held() const;
  // `attempts`: the entry's delivery count (0: a first delivery, not looked up); the job is
  // already counted in running_[index].
  void process(RedisConnection& conn, size_t index, const std::string& id, const redisReply* fields, int64_t attempts);
  QueueResult run(const QueueJob& job, const std::string& stem);
  QueueResult abandoned(const QueueJob& job, int64_t attempts) const;
  static int64_t deliveries(RedisConnection& conn, const std::string& id);
  std::string materialize(const QueueJob& job);
  // Runs `f` until Redis takes it or the worker stops; false when it stopped first.
  template <class F>
  bool until_done(F&& f);
  std::string consumer_name(size_t index) const;

  WorkerOptions opt_;
  ProblemSessions& sessions_;
  mutable std::mutex mu_;
  std::mutex claim_mu_;  // held from asking may_take to counting the job taken
  std::vector<std::string> running_;  // by consumer: the entry id it holds, "" when idle
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> jobs_{0}, reclaimed_{0}, wait_ms_sum_{0}, wait_count_{0};
  std::vector<std::thread> threads_;
};

}  // namespace kagent::serve
