#include "serve/queue/node_heartbeat.h"

#include <algorithm>
#include <map>

#include <hiredis/hiredis.h>

#include <fmt/format.h>

namespace kagent::serve {

using nlohmann::json;

NodeHeartbeat::NodeHeartbeat(RedisUrl url, std::string node, std::string http_url, std::chrono::milliseconds ttl,
                             JobQueue& front, const QueueWorker* worker)
    : url_(std::move(url)), node_(std::move(node)), http_url_(std::move(http_url)), ttl_(ttl), front_(front), worker_(worker),
      started_ms_(wall_ms()) {}

NodeHeartbeat::~NodeHeartbeat() { stop(); }

void NodeHeartbeat::start() {
  // One beat now: the node is in the cluster, and /health says how Redis is, from the start.
  try {
    RedisConnection conn(url_, std::chrono::seconds(2));
    beat(conn);
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    snap_.error = e.what();
  }
  thread_ = std::thread([this] { loop(); });
}

void NodeHeartbeat::stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  try {
    RedisConnection conn(url_, std::chrono::seconds(1));
    conn.command({"DEL", queue_keys::node(node_)});
    conn.command({"SREM", queue_keys::kNodes, node_});
  } catch (const std::exception&) {
    // Redis is down: the heartbeat expires and the node is counted lost, which it then is.
  }
}

void NodeHeartbeat::loop() {
  RedisConnection conn(url_, std::chrono::seconds(2));
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::seconds(1));
    if (stop_) break;
    lock.unlock();
    std::string error;
    try {
      beat(conn);
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    if (!error.empty()) {  // the last picture stays, marked unreachable
      snap_.reachable = false;
      snap_.error = error;
    }
  }
}

void NodeHeartbeat::beat(RedisConnection& conn) {
  const QueueWorker::Counters c = worker_ ? worker_->counters() : QueueWorker::Counters{};
  const int64_t now = wall_ms();
  const std::string key = queue_keys::node(node_);
  conn.command({"HSET", key, "url", http_url_, "started_ms", std::to_string(started_ms_), "beat_ms", std::to_string(now),
                "jobs", std::to_string(c.jobs), "reclaimed", std::to_string(c.reclaimed), "submitted",
                std::to_string(front_.submitted()), "wait_ms_sum", std::to_string(c.wait_ms_sum), "wait_count",
                std::to_string(c.wait_count), "consumers", std::to_string(c.consumers), "running", std::to_string(c.running)});
  conn.command({"PEXPIRE", key, std::to_string(ttl_.count())});
  conn.command({"SADD", queue_keys::kNodes, node_});
  // Running jobs claimed again by their own consumer: their idle time starts over, so
  // XAUTOCLAIM never takes a job from a node that is alive, however long it runs.
  if (worker_)
    for (const auto& [consumer, id] : worker_->running())
      conn.command({"XCLAIM", queue_keys::kStream, queue_keys::kGroup, consumer, "0", id, "JUSTID"});

  ClusterSnapshot s;
  s.reachable = true;
  s.depth = reply_integer(conn.command({"XLEN", queue_keys::kStream}).get());
  try {
    const Reply pending = conn.command({"XPENDING", queue_keys::kStream, queue_keys::kGroup});
    const auto p = reply_elements(pending.get());
    if (!p.empty()) s.running = reply_integer(p[0]);
  } catch (const RedisReplyError&) {
    // NOGROUP: a Redis that lost its data; the consumers make the group again.
  }
  const Reply members = conn.command({"SMEMBERS", queue_keys::kNodes});
  for (const auto* m : reply_elements(members.get())) {
    const std::string name = reply_string(m);
    const Reply h = conn.command({"HGETALL", queue_keys::node(name)});
    const auto f = reply_elements(h.get());
    if (f.empty()) {
      s.lost.push_back(name);
      continue;
    }
    std::map<std::string, std::string> v;
    for (size_t i = 0; i + 1 < f.size(); i += 2) v[reply_string(f[i])] = reply_string(f[i + 1]);
    auto num = [&](const char* k) -> int64_t {
      try {
        return v.count(k) ? std::stoll(v[k]) : 0;
      } catch (const std::exception&) {
        return 0;
      }
    };
    NodeStatus n;
    n.name = name;
    n.url = v["url"];
    n.jobs = num("jobs");
    n.reclaimed = num("reclaimed");
    n.submitted = num("submitted");
    n.wait_ms_sum = num("wait_ms_sum");
    n.wait_count = num("wait_count");
    n.consumers = num("consumers");
    n.running = num("running");
    n.uptime_s = std::max<double>(0.001, static_cast<double>(num("beat_ms") - num("started_ms")) / 1000.0);
    s.alive.push_back(std::move(n));
  }
  std::sort(s.lost.begin(), s.lost.end());
  std::sort(s.alive.begin(), s.alive.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::lock_guard lock(mu_);
  snap_ = std::move(s);
}

ClusterSnapshot NodeHeartbeat::snapshot() const {
  std::lock_guard lock(mu_);
  return snap_;
}

json NodeHeartbeat::health_json() const {
  const ClusterSnapshot s = snapshot();
  json nodes = json::array();
  for (const auto& n : s.alive)
    nodes.push_back({{"node", n.name},
                     {"url", n.url},
                     {"jobs", n.jobs},
                     {"jobs_per_second", n.jobs_per_second()},
                     {"reclaimed", n.reclaimed},
                     {"running", n.running},
                     {"consumers", n.consumers},
                     {"wait_seconds_avg", n.wait_seconds_avg()}});
  return {{"url", url_.text()},  {"node", node_},           {"reachable", s.reachable},
          {"error", s.error.empty() ? json(nullptr) : json(s.error)},   {"depth", s.depth},
          {"running", s.running}, {"waiting_requests", front_.waiting()}, {"nodes", nodes},
          {"nodes_lost", s.lost}};
}

std::string NodeHeartbeat::prometheus() const {
  const ClusterSnapshot s = snapshot();
  const QueueWorker::Counters c = worker_ ? worker_->counters() : QueueWorker::Counters{};
  std::string out;
  auto line = [&](const std::string& name, const std::string& help, const std::string& type, const std::string& samples) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", name, help, name, type, samples);
  };
  auto one = [](const std::string& name, double v) { return fmt::format("{} {}\n", name, v); };
  line("kagent_queue_up", "1 while this node reaches the cluster's Redis (0: /health says degraded)", "gauge",
       one("kagent_queue_up", s.reachable ? 1 : 0));
  line("kagent_queue_depth", "jobs in the cluster's stream, waiting or running", "gauge",
       one("kagent_queue_depth", static_cast<double>(s.depth)));
  line("kagent_queue_running", "jobs claimed by a node's worker and not yet done (the cluster)", "gauge",
       one("kagent_queue_running", static_cast<double>(s.running)));
  line("kagent_queue_running_here", "jobs this node's workers hold now", "gauge",
       one("kagent_queue_running_here", static_cast<double>(c.running)));
  line("kagent_queue_submitted_total", "jobs this node's front put on the stream", "counter",
       one("kagent_queue_submitted_total", static_cast<double>(front_.submitted())));
  line("kagent_queue_reused_total", "requests this node's front answered from a result already stored (retries)", "counter",
       one("kagent_queue_reused_total", static_cast<double>(front_.answered_from_redis())));
  line("kagent_queue_jobs_total", "jobs this node's workers finished", "counter",
       one("kagent_queue_jobs_total", static_cast<double>(c.jobs)));
  line("kagent_queue_reclaimed_total", "jobs this node's workers took over from a dead node (XAUTOCLAIM)", "counter",
       one("kagent_queue_reclaimed_total", static_cast<double>(c.reclaimed)));
  line("kagent_queue_wait_seconds", "time from a job's XADD to this node's worker taking it", "summary",
       one("kagent_queue_wait_seconds_sum", static_cast<double>(c.wait_ms_sum) / 1000.0) +
           one("kagent_queue_wait_seconds_count", static_cast<double>(c.wait_count)));
  std::string alive, jobs, rate, wait;
  int64_t cluster_wait_ms = 0, cluster_wait_count = 0;
  for (const auto& n : s.alive) {
    const std::string label = fmt::format("{{node=\"{}\"}}", n.name);
    jobs += fmt::format("kagent_cluster_node_jobs_total{} {}\n", label, n.jobs);
    rate += fmt::format("kagent_cluster_node_jobs_per_second{} {}\n", label, n.jobs_per_second());
    wait += fmt::format("kagent_cluster_node_wait_seconds_avg{} {}\n", label, n.wait_seconds_avg());
    cluster_wait_ms += n.wait_ms_sum;
    cluster_wait_count += n.wait_count;
  }
  line("kagent_cluster_nodes", "nodes with a live heartbeat", "gauge", one("kagent_cluster_nodes", static_cast<double>(s.alive.size())));
  line("kagent_cluster_nodes_lost", "nodes whose heartbeat expired without a clean stop", "gauge",
       one("kagent_cluster_nodes_lost", static_cast<double>(s.lost.size())));
  line("kagent_cluster_wait_seconds_avg", "the live nodes' mean time from XADD to a worker taking the job", "gauge",
       one("kagent_cluster_wait_seconds_avg", NodeStatus::mean_seconds(cluster_wait_ms, cluster_wait_count)));
  line("kagent_cluster_node_jobs_total", "jobs each live node's workers finished", "counter", jobs);
  line("kagent_cluster_node_jobs_per_second", "each live node's jobs per second since it started", "gauge", rate);
  line("kagent_cluster_node_wait_seconds_avg", "each live node's mean waiting time of the jobs it took", "gauge", wait);
  return out;
}

}  // namespace kagent::serve
