#include "serve/queue/queue_worker.h"

#include <algorithm>
#include <cstdio>

#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include "common/files.h"
#include "common/sha256.h"
#include "common/utf8.h"
#include "serve/api_error.h"

namespace kagent::serve {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The first of a stream reply's entries ([[id, [field, value, ...]], ...]): its id and fields;
// false when there is none.
bool first_entry(const redisReply* entries, std::string& id, const redisReply*& fields) {
  const auto list = reply_elements(entries);
  if (list.empty()) return false;
  const auto e = reply_elements(list[0]);
  if (e.size() != 2) return false;
  id = reply_string(e[0]);
  fields = e[1];
  return true;
}

}  // namespace

QueueWorker::QueueWorker(WorkerOptions options, ProblemSessions& sessions)
    : opt_(std::move(options)), sessions_(sessions), running_(opt_.consumers) {}

QueueWorker::~QueueWorker() { stop(); }

void QueueWorker::start() {
  for (size_t i = 0; i < opt_.consumers; ++i) threads_.emplace_back([this, i] { consume(i); });
}

void QueueWorker::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

std::string QueueWorker::consumer_name(size_t index) const { return fmt::format("{}/{}", opt_.node, index); }

std::vector<std::pair<std::string, std::string>> QueueWorker::running() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < running_.size(); ++i)
    if (!running_[i].empty()) out.emplace_back(consumer_name(i), running_[i]);
  return out;
}

size_t QueueWorker::held() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::count_if(running_.begin(), running_.end(), [](const std::string& r) { return !r.empty(); }));
}

QueueWorker::Counters QueueWorker::counters() const {
  return {jobs_.load(), reclaimed_.load(), wait_ms_sum_.load(), wait_count_.load(), held(), opt_.consumers};
}

int64_t QueueWorker::deliveries(RedisConnection& conn, const std::string& id) {
  // XPENDING's extended form for one entry: [[id, consumer, idle ms, times delivered]].
  const Reply r = conn.command({"XPENDING", queue_keys::kStream, queue_keys::kGroup, id, id, "1"});
  const auto rows = reply_elements(r.get());
  if (rows.empty()) return 0;
  const auto row = reply_elements(rows[0]);
  return row.size() >= 4 ? reply_integer(row[3]) : 0;
}

template <class F>
bool QueueWorker::until_done(F&& f) {
  return !stop_ && retry_unavailable(f, [&](const RedisUnavailable&) { return !stop_; });
}

void QueueWorker::consume(size_t index) {
  const std::string consumer = consumer_name(index);
  // Longer than the BLOCK below: a read that waits its full second is no timeout.
  RedisConnection conn(opt_.url, std::chrono::seconds(5));
  std::string cursor = "0-0";  // where the scan of the group's pending jobs goes on
  auto next_scan = Clock::now();
  while (!stop_) {
    // One consumer at a time asks for room and takes a job, which is counted before the next asks:
    // consumers that all found room at once would each take one.
    std::unique_lock claim(claim_mu_);
    if (stop_) break;
    if (opt_.may_take && !opt_.may_take(held())) {
      claim.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    try {
      std::string id;
      const redisReply* fields = nullptr;
      Reply holder;
      bool reclaimed = false;
      if (Clock::now() >= next_scan) {
        // Jobs another consumer claimed and left idle past the bound: their node died.
        holder = conn.command({"XAUTOCLAIM", queue_keys::kStream, queue_keys::kGroup, consumer,
                               std::to_string(opt_.reclaim_idle.count()), cursor, "COUNT", "1"});
        const auto parts = reply_elements(holder.get());
        if (parts.size() >= 2) {
          cursor = reply_string(parts[0]);
          reclaimed = first_entry(parts[1], id, fields);
        }
        if (cursor == "0-0" && id.empty())
          next_scan = Clock::now() + std::max<std::chrono::milliseconds>(std::chrono::milliseconds(1000), opt_.reclaim_idle / 4);
      }
      // New jobs once the scan went round (a scan under way goes on at once).
      if (id.empty() && cursor == "0-0") {
        holder = conn.command({"XREADGROUP", "GROUP", queue_keys::kGroup, consumer, "COUNT", "1", "BLOCK", "1000",
                               "STREAMS", queue_keys::kStream, ">"});
        const auto streams = reply_elements(holder.get());
        if (!streams.empty()) {
          const auto stream = reply_elements(streams[0]);  // [name, entries]
          if (stream.size() == 2) first_entry(stream[1], id, fields);
        }
      }
      if (id.empty()) continue;
      {
        std::lock_guard lock(mu_);
        running_[index] = id;
      }
      claim.unlock();
      int64_t attempts = 0;
      if (reclaimed) {
        ++reclaimed_;
        attempts = deliveries(conn, id);
      }
      process(conn, index, id, fields, attempts);
    } catch (const RedisReplyError& e) {
      if (claim.owns_lock()) claim.unlock();  // the others may ask meanwhile
      // The group is gone (a Redis that lost its data): make it again; anything else is said
      // and retried, never a dead consumer.
      if (std::string(e.what()).rfind("NOGROUP", 0) == 0) {
        try {
          create_group(conn);
        } catch (const std::exception&) {
        }
      } else {
        std::fprintf(stderr, "kagent serve: warning: queue consumer %s: %s\n", consumer.c_str(), e.what());
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    } catch (const RedisUnavailable&) {
      if (claim.owns_lock()) claim.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

void QueueWorker::process(RedisConnection& conn, size_t index, const std::string& id, const redisReply* fields,
                          int64_t attempts) {
  struct Idle {  // the heartbeat stops keeping the entry fresh however this ends
    QueueWorker& w;
    size_t index;
    ~Idle() {
      std::lock_guard lock(w.mu_);
      w.running_[index].clear();
    }
  } idle{*this, index};
  std::string body;
  const auto f = reply_elements(fields);
  for (size_t i = 0; i + 1 < f.size(); i += 2)
    if (reply_string(f[i]) == "job") body = reply_string(f[i + 1]);
  QueueJob job;
  bool readable = true;
  try {
    job = json::parse(body).get<QueueJob>();
  } catch (const std::exception& e) {
    readable = false;  // acknowledged below: an entry no node can read would come back for ever
    std::fprintf(stderr, "kagent serve: warning: queue entry %s is not a job: %s\n", id.c_str(), e.what());
  }
  if (readable) {
    wait_ms_sum_ += std::max<int64_t>(0, wall_ms() - job.enqueued_ms);
    ++wait_count_;
    // Answered already (a retry's job, or a reclaimed one whose first worker got as far as
    // storing): nothing to run.
    const Reply have = conn.command({"EXISTS", queue_keys::result(job.key)});
    if (reply_integer(have.get()) == 0) {
      const QueueResult r = attempts > opt_.max_attempts ? abandoned(job, attempts) : run(job, id);
      const std::string value = dump_json(json(r));
      if (!until_done([&] {
            conn.command({"SET", queue_keys::result(job.key), value, "NX", "EX", std::to_string(opt_.result_ttl.count())});
          }))
        return;  // stopping: the job stays pending and another node reclaims it
      if (opt_.done) opt_.done(r);
    }
  }
  if (!until_done([&] {
        conn.command({"XACK", queue_keys::kStream, queue_keys::kGroup, id});
        conn.command({"XDEL", queue_keys::kStream, id});  // the stream's length stays the jobs not done
      }))
    return;
  ++jobs_;
}

std::string QueueWorker::materialize(const QueueJob& job) {
  std::error_code ec;
  const std::string sha = sha256_hex(job.problem_source);
  if (fs::is_regular_file(job.problem_path, ec) && sha256_hex(read_file(job.problem_path)) == sha) return job.problem_path;
  // Another node's problem (another suite folder, or a reference_code it saved): the same text
  // under its own name, so prompts and verdicts name it as the front does.
  std::string name = fs::path(job.problem_name).filename().string();
  if (name.empty() || name == "." || name == "..") name = "problem.py";
  const fs::path path = opt_.dir / "problems" / sha.substr(0, 16) / name;
  if (!fs::exists(path, ec)) {
    fs::create_directories(path.parent_path());
    write_file_atomic(path, job.problem_source);
  }
  return path.string();
}

QueueResult QueueWorker::abandoned(const QueueJob& job, int64_t attempts) const {
  std::fprintf(stderr, "kagent serve: warning: queue job %s (problem %s) abandoned: taken %lld times, no node finished it\n",
               job.key.c_str(), job.problem_name.c_str(), static_cast<long long>(attempts));
  QueueResult r;
  r.sha256 = job.sha256;
  r.node = opt_.node;
  r.error_status = 500;
  r.error_code = "job_abandoned";
  r.error_message = fmt::format(
      "the job was taken by {} nodes in turn and none finished it (each died or was killed while it ran): "
      "it is not run again (--queue-max-attempts {})",
      attempts - 1, opt_.max_attempts);
  return r;
}

QueueResult QueueWorker::run(const QueueJob& job, const std::string& stem) {
  QueueResult r;
  r.sha256 = job.sha256;
  r.node = opt_.node;
  try {
    const std::string problem = materialize(job);
    const auto format = prompt::answer_format_from_string(job.format);
    fs::path code = opt_.dir / "jobs" / (stem + (format == prompt::AnswerFormat::Cuda ? ".cu" : ".py"));
    fs::create_directories(code.parent_path());
    write_file_atomic(code, job.code);
    r.result = sessions_.evaluate_here(problem, code.string(), format);
    std::error_code ec;
    fs::remove(code, ec);
  } catch (const ApiError& e) {
    r.error_status = e.status;
    r.error_code = e.code;
    r.error_message = e.what();
  } catch (const std::exception& e) {
    r.error_status = 500;
    r.error_code = "internal";
    r.error_message = e.what();
  }
  return r;
}

}  // namespace kagent::serve
