#include "serve/queue/job_queue.h"

#include <cstdio>
#include <filesystem>
#include <random>
#include <vector>

#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include "common/files.h"
#include "common/utf8.h"
#include "serve/api_error.h"

namespace kagent::serve {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string fresh_key() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("job-{:016x}{:016x}", rng(), rng());
}

ApiError stopping() { return ApiError(503, "stopping", "the server is stopping; retry on another node", 5); }

}  // namespace

JobQueue::JobQueue(QueueOptions options) : opt_(std::move(options)), conn_(opt_.url, std::chrono::seconds(2)) {}

JobQueue::~JobQueue() { stop(); }

void JobQueue::open() {
  std::lock_guard c(conn_mu_);
  conn_.command({"PING"});
  create_group(conn_);
  poller_ = std::thread([this] { poll_loop(); });
}

void JobQueue::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

size_t JobQueue::waiting() {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

std::string JobQueue::add(RedisConnection& conn, const QueueJob& job) {
  const std::string body = dump_json(json(job));
  const std::string id = reply_string(conn.command({"XADD", queue_keys::kStream, "*", "job", body}).get());
  conn.command({"SET", queue_keys::job(job.key), id, "EX", std::to_string(opt_.result_ttl.count())});
  return id;
}

std::string JobQueue::claim(RedisConnection& conn, const QueueJob& job) {
  const Reply claimed =
      conn.command({"SET", queue_keys::job(job.key), "", "NX", "EX", std::to_string(opt_.result_ttl.count())});
  if (!reply_nil(claimed.get())) return add(conn, job);
  return reply_string(conn.command({"GET", queue_keys::job(job.key)}).get());
}

EvalResult JobQueue::decode(const std::string& stored, const QueueJob& job) {
  const json j = json::parse(stored, nullptr, false);
  if (j.is_discarded()) throw ApiError(500, "internal", "the stored result of job " + job.key + " is not JSON");
  const QueueResult r = j.get<QueueResult>();
  if (r.sha256 != job.sha256)
    throw ApiError(409, "request_id_conflict",
                   fmt::format("request_id '{}' was used for another answer or problem", job.key.substr(job.key.find(':') + 1)));
  if (r.error_status) throw ApiError(r.error_status, r.error_code, r.error_message);
  if (!r.result) throw ApiError(500, "internal", "the stored result of job " + job.key + " holds no verdict");
  return *r.result;
}

EvalResult JobQueue::evaluate(const std::string& problem, const std::string& code_file, prompt::AnswerFormat format,
                              const std::string& key) {
  QueueJob job;
  job.key = key.empty() ? fresh_key() : key;
  job.problem_path = problem;
  job.problem_name = std::filesystem::path(problem).filename().string();
  job.problem_source = read_file(problem);
  job.format = prompt::to_string(format);
  job.code = read_file(code_file);
  job.sha256 = job_content_sha(job.problem_source, job.format, job.code);
  job.front = opt_.node;
  job.enqueued_ms = wall_ms();

  std::shared_ptr<Waiter> w;
  {
    std::lock_guard lock(mu_);
    if (stop_) throw stopping();
    if (auto it = waiting_.find(job.key); it != waiting_.end()) w = it->second;  // a retry while the first waits
  }
  if (!w) {
    const auto give_up = Clock::now() + opt_.retry;
    std::optional<std::string> stored;
    std::string id;
    retry_unavailable(
        [&] {
          std::lock_guard c(conn_mu_);
          // A request_id answered already (on this node or another) answers the stored result:
          // never a second evaluation with perhaps another verdict.
          const Reply r = conn_.command({"GET", queue_keys::result(job.key)});
          if (!reply_nil(r.get())) stored = reply_string(r.get());
          else id = claim(conn_, job);
        },
        [&](const RedisUnavailable& e) {
          if (Clock::now() >= give_up)
            throw ApiError(503, "queue_unavailable",
                           fmt::format("the cluster's queue cannot be reached for {} s: {}", opt_.retry.count(), e.what()),
                           5);
          std::lock_guard lock(mu_);
          if (stop_) throw stopping();
          return true;
        });
    if (stored) {
      ++reused_;
      return decode(*stored, job);
    }
    ++submitted_;
    std::lock_guard lock(mu_);
    auto& slot = waiting_[job.key];
    if (!slot) {
      slot = std::make_shared<Waiter>();
      slot->job = job;
      slot->stream_id = id;
    }
    w = slot;  // another request of the key added its job meanwhile: both run, the first result stored wins
  }

  const auto deadline = Clock::now() + opt_.wait;
  std::string stored;
  {
    std::unique_lock lock(mu_);
    ++w->requests;
    // A request that gives up stops waiting; the last one takes the waiter away. Declared after
    // the lock: it runs with the lock held.
    struct Leave {
      JobQueue& q;
      std::shared_ptr<Waiter> w;
      ~Leave() {
        if (--w->requests == 0 && !w->result)
          if (auto it = q.waiting_.find(w->job.key); it != q.waiting_.end() && it->second == w) q.waiting_.erase(it);
      }
    } leave{*this, w};
    while (!w->result) {
      if (stop_) throw stopping();
      const auto now = Clock::now();
      if (now >= deadline)
        throw ApiError(504, "queue_timeout", fmt::format("no node answered the job within {} s", opt_.wait.count()));
      if (unreachable_since_ && now - *unreachable_since_ > opt_.retry)
        throw ApiError(503, "queue_unavailable",
                       fmt::format("the cluster's queue ({}) cannot be reached for {} s", opt_.url.text(), opt_.retry.count()),
                       5);
      cv_.wait_for(lock, std::chrono::seconds(1));
    }
    stored = *w->result;
  }
  return decode(stored, job);
}

void JobQueue::poll_loop() {
  RedisConnection conn(opt_.url, std::chrono::seconds(2));
  auto last_check = Clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (stop_ || waiting_.empty()) continue;
    std::vector<std::shared_ptr<Waiter>> ws;
    for (const auto& [key, w] : waiting_) ws.push_back(w);
    lock.unlock();
    std::vector<std::pair<std::shared_ptr<Waiter>, std::string>> found;
    bool reached = true;
    try {
      std::vector<bool> done(ws.size(), false);
      for (size_t i = 0; i < ws.size(); i += 256) {
        std::vector<std::string> args = {"MGET"};
        const size_t end = std::min(ws.size(), i + 256);
        for (size_t k = i; k < end; ++k) args.push_back(queue_keys::result(ws[k]->job.key));
        const Reply r = conn.command(args);
        const auto values = reply_elements(r.get());
        for (size_t k = 0; k < values.size() && i + k < end; ++k)
          if (!reply_nil(values[k])) {
            found.emplace_back(ws[i + k], reply_string(values[k]));
            done[i + k] = true;
          }
      }
      // A job whose entry is gone and that has no result was lost (a Redis restarted without
      // persistence, or one that lost its last second): it goes back on the stream.
      const auto now = Clock::now();
      if (now - last_check >= std::chrono::seconds(5)) {
        last_check = now;
        for (size_t k = 0; k < ws.size(); ++k) {
          if (done[k] || now - ws[k]->checked < std::chrono::seconds(5)) continue;
          ws[k]->checked = now;
          if (ws[k]->stream_id.empty()) {
            // Another front claimed the key: its entry, once added. Still none after a check's
            // wait: that front died between its claim and its XADD, and this one adds the job.
            ws[k]->stream_id = reply_string(conn.command({"GET", queue_keys::job(ws[k]->job.key)}).get());
            if (ws[k]->stream_id.empty() && !ws[k]->claim_seen_empty) {
              ws[k]->claim_seen_empty = true;
              continue;
            }
            if (!ws[k]->stream_id.empty()) continue;
          } else {
            const Reply entry = conn.command({"XRANGE", queue_keys::kStream, ws[k]->stream_id, ws[k]->stream_id});
            if (!reply_elements(entry.get()).empty()) continue;
          }
          const Reply again = conn.command({"GET", queue_keys::result(ws[k]->job.key)});  // done since the MGET
          if (!reply_nil(again.get())) found.emplace_back(ws[k], reply_string(again.get()));
          else ws[k]->stream_id = add(conn, ws[k]->job);
        }
      }
    } catch (const RedisUnavailable&) {
      reached = false;
    } catch (const RedisReplyError& e) {
      std::fprintf(stderr, "kagent serve: warning: the queue's poller: %s\n", e.what());
    }
    lock.lock();
    if (reached) unreachable_since_.reset();
    else if (!unreachable_since_) unreachable_since_ = Clock::now();
    for (auto& [w, stored] : found) {
      w->result = std::move(stored);
      if (auto it = waiting_.find(w->job.key); it != waiting_.end() && it->second == w) waiting_.erase(it);
    }
    if (!found.empty()) cv_.notify_all();
  }
}

}  // namespace kagent::serve
