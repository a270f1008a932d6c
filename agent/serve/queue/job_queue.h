// The front's side of the cluster queue (kagent serve --queue): an evaluation this node's HTTP
// front took becomes a job on the shared stream (XADD), any node's worker runs it, and the
// front waits for its result key. One poller thread reads the results of every waiting request
// at once (MGET every 50 ms), so waiting costs no connection per request and survives a Redis
// restart: the job and, once written, its result are in Redis, not in a connection.
// While Redis cannot be reached, a request waits and retries up to `retry`, then answers 503
// queue_unavailable; a job whose entry vanished (a Redis that lost data) is put back.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "prompt/answer_format.h"
#include "result/eval_result.h"
#include "serve/queue/queue_job.h"
#include "serve/queue/redis_connection.h"
#include "serve/redis_url.h"

namespace kagent::serve {

struct QueueOptions {
  RedisUrl url;
  std::string node;                                       // this node's name
  std::chrono::seconds retry{30};                         // Redis unreachable: how long a request waits
  std::chrono::seconds wait{1800};                        // the longest a request waits for its result (504 after)
  std::chrono::seconds result_ttl{std::chrono::hours(24)};  // how long a result answers retries
};

class JobQueue {
 public:
  explicit JobQueue(QueueOptions options);
  ~JobQueue();
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // Start-up: reaches Redis and makes the stream and its consumer group where they are missing.
  // Throws RedisUnavailable (kagent serve exits 15) or RedisReplyError.
  void open();
  // Evaluates `code_file` against `problem` on whichever node's worker takes the job, and
  // returns its verdict. `key`: the job's idempotency key (empty: a fresh one). Throws ApiError:
  // 409 request_id_conflict (the key's result is for other content), 503 queue_unavailable,
  // 504 queue_timeout, 503 stopping, or the error the worker answered (422 problem_error).
  EvalResult evaluate(const std::string& problem, const std::string& code_file, prompt::AnswerFormat format,
                      const std::string& key);
  // Ends every wait (503 stopping) and the poller: called when the server stops.
  void stop();

  const QueueOptions& options() const { return opt_; }
  int64_t submitted() const { return submitted_.load(); }
  int64_t answered_from_redis() const { return reused_.load(); }  // answered by a result that was there already
  size_t waiting();

 private:
  struct Waiter {
    QueueJob job;
    std::string stream_id;
    std::optional<std::string> result;  // the stored result, once there
    int requests = 0;                    // the requests waiting on it
    bool claim_seen_empty = false;       // another front's claim was seen without its entry once
    std::chrono::steady_clock::time_point checked = std::chrono::steady_clock::now();
  };
  void poll_loop();
  // XADD, and the key's claim pointed at the entry; returns the entry id.
  std::string add(RedisConnection& conn, const QueueJob& job);
  // The key's job: added here when this front claims the key first (SET NX), else the entry
  // another front added ("" while that front has claimed it and not yet added it).
  std::string claim(RedisConnection& conn, const QueueJob& job);
  EvalResult decode(const std::string& stored, const QueueJob& job);

  QueueOptions opt_;
  std::mutex conn_mu_;
  RedisConnection conn_;  // GET and XADD for the HTTP threads (short commands: one at a time)
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Waiter>> waiting_;  // by key: two requests of one key share a job
  std::optional<std::chrono::steady_clock::time_point> unreachable_since_;  // the poller's view
  bool stop_ = false;
  std::atomic<int64_t> submitted_{0}, reused_{0};
  std::thread poller_;
};

}  // namespace kagent::serve
