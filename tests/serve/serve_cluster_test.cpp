// `kagent serve --queue redis://HOST:PORT`: three --compile-only nodes, each its own process and
// port, on one real redis-server (started here on a free loopback port, appendonly on, in the
// test's folder). 300 requests (evaluations, batches, OpenRLHF rewards, episodes' creates and
// steps) go to the three fronts while the cluster is hurt: slow jobs queued while only one node
// runs are taken at once by the two that join late; that node is killed with kill -9 while it
// holds jobs (they are reclaimed elsewhere, its front's requests retried on another front with
// their request_id); Redis is killed and restarted (/health says degraded meanwhile; nothing
// acknowledged is lost). Every request is answered, and asked again on another front it
// answers the same bytes: no request answered twice with different results, none lost.
// Also: an unreachable --queue exits 15 and a malformed one 2, each with one line; a job that
// every node taking it died on is answered job_abandoned past --queue-max-attempts, not run again.
// Skipped, with the reason printed, where redis-server is not installed.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect_fixtures.h"
#include "common/guarded_spawn.h"
#include "loopback_port.h"
#include "serve_process.h"
#include "temp_dir.h"

using namespace kagent::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// redis-server on PATH; empty when it is not installed.
std::string find_redis_server() {
  const std::string path = kagent::resolve_in_path("redis-server");
  return path.find('/') == std::string::npos ? std::string() : path;
}

// One command in Redis' protocol (RESP) on a fresh connection; the raw reply (read until the
// server has said nothing for 300 ms, enough for the short replies a test asks for).
std::string redis_command(int port, const std::vector<std::string>& args) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  timeval tv{0, 300'000};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string reply;
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string req = "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& arg : args) req += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
    if (::write(s, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::read(s, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(s);
  return reply;
}

// The text of a bulk-string reply ("$5\r\nhello\r\n"); empty for anything else.
std::string bulk(const std::string& reply) {
  if (reply.empty() || reply[0] != '$') return {};
  const size_t eol = reply.find("\r\n");
  const long n = std::stol(reply.substr(1, eol - 1));
  return n < 0 ? std::string() : reply.substr(eol + 2, static_cast<size_t>(n));
}

// True when Redis answers PING on `port`.
bool redis_pong(int port) { return redis_command(port, {"PING"}).rfind("+PONG", 0) == 0; }

// redis-server on loopback, appendonly with an fsync per write, its files in `dir`: a kill -9
// and a start on the same folder loses nothing it acknowledged.
class RedisProcess {
 public:
  RedisProcess(std::string binary, std::string dir, int port) : binary_(std::move(binary)), dir_(std::move(dir)), port_(port) {}
  ~RedisProcess() { kill(); }
  bool start() {
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(125);
      const std::string port = std::to_string(port_), log = dir_ + "/redis.log";
      ::execl(binary_.c_str(), binary_.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--dir", dir_.c_str(),
              "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", log.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      if (redis_pong(port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string binary_, dir_;
  int port_;
  pid_t pid_ = -1;
};

double metric(int port, const std::string& name) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(10, 0);
  auto r = c.Get("/metrics");
  if (!r) return -1;
  const auto pos = r->body.find("\n" + name + " ");
  if (pos == std::string::npos) return -1;
  return std::stod(r->body.substr(pos + name.size() + 2));
}

json health(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(10, 0);
  return body_of(c.Get("/health"));
}

// An answer in the KernelBench format that is not Python: a quick job (the syntax error is the
// verdict, found without a GPU), distinct per request.
std::string not_python(const std::string& tag) { return "bad_syntax_" + tag + " = ("; }
// Answers with a format error: answered by the front itself, no job (most of the 300, so the
// test stays quick on two cores).
std::string two_blocks(const std::string& tag) { return "```python\na = 1\n```\n```python\nb = '" + tag + "'\n```\n"; }
std::string no_code(const std::string& tag) { return "I would rather explain it (" + tag + ")."; }

// One request of the 300: where it goes, what it sends, what it got.
struct Request {
  std::string method = "POST", path;
  json body;
  int front = 0;        // the node whose front it goes to first
  bool pinned = false;  // an episode's: only its own front knows it
  int status = 0;
  json answer;
};

// The three fronts; a killed node's port is 0 until it is back.
struct Fronts {
  std::mutex mu;
  std::vector<int> ports;
  int port(int i) {
    std::lock_guard lock(mu);
    return ports[static_cast<size_t>(i) % ports.size()];
  }
  void set(int i, int port) {
    std::lock_guard lock(mu);
    ports[static_cast<size_t>(i)] = port;
  }
};

// Sends `r` until it is answered (not a lost connection, not 5xx), moving on to the next live
// front where its own is gone (stateless requests only), until `deadline`.
void send(Request& r, Fronts& fronts, Clock::time_point deadline) {
  int f = r.front;
  while (Clock::now() < deadline) {
    const int port = fronts.port(f);
    if (port == 0) {
      if (!r.pinned) ++f;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(120, 0);
    auto res = r.method == "GET" ? c.Get(r.path.c_str()) : c.Post(r.path.c_str(), r.body.dump(), "application/json");
    if (res && res->status < 500) {
      r.status = res->status;
      r.answer = json::parse(res->body, nullptr, false);
      return;
    }
    if (!r.pinned) ++f;  // that front died (or its queue was down past the bound): another one
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Sends every request of `batch` (each a sequence: an episode's steps go in order) on `threads`
// threads.
void run_all(std::vector<std::vector<Request*>>& batch, Fronts& fronts, Clock::time_point deadline, int threads = 8) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i = next++; i < batch.size(); i = next++)
        for (Request* r : batch[i]) send(*r, fronts, deadline);
    });
  for (auto& t : pool) t.join();
}

}  // namespace

TEST_CASE("cluster: an unreachable --queue exits 15, a malformed one 2, each with one line") {
  TempDir dir("kagent-serve-queue-bad");
  write_tiny_suite(dir, "suite");
  auto serve = [&](const std::string& queue) {
    return spawn_kagent({"serve", "--data", dir.str() + "/data", "--problems", dir.str() + "/suite", "--compile-only",
                         "--port", "0", "--queue", queue},
                        {}, dir.str())
        .wait();
  };
  const std::string nobody = "redis://127.0.0.1:" + std::to_string(free_port());
  const KagentRun unreachable = serve(nobody);
  CHECK(unreachable.status == 15);
  CHECK(unreachable.err_lines() == 1);
  CHECK(has(unreachable.err, "kagent serve: error: --queue " + nobody + ": cannot use the cluster's Redis"));
  for (const std::string bad : {"redis://127.0.0.1:notaport", "http://127.0.0.1:6379", "redis://"}) {
    const KagentRun malformed = serve(bad);
    INFO(bad, " ", malformed.err);
    CHECK(malformed.status == 2);
    CHECK(malformed.err_lines() == 1);
    CHECK(has(malformed.err, "--queue: '" + bad + "' is not a redis://HOST:PORT URL"));
  }
}

TEST_CASE("cluster: 3 nodes on one Redis, 300 requests, a node killed, Redis restarted: each answered once, none lost") {
  const std::string redis_binary = find_redis_server();
  if (redis_binary.empty()) {
    MESSAGE("redis-server is not installed (apt-get install redis-server; scripts/setup.sh does): the cluster test is skipped");
    return;
  }
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(240);  // never a hung CI: every wait ends here
  TempDir dir("kagent-serve-cluster");
  write_tiny_suite(dir, "suite");
  const std::string suite = dir.str() + "/suite";
  std::filesystem::create_directories(dir.str() + "/redis");
  RedisProcess redis(redis_binary, dir.str() + "/redis", free_port());
  const bool redis_up = redis.start();
  const std::string redis_log = kagent::read_file(dir.str() + "/redis/redis.log");
  REQUIRE_MESSAGE(redis_up, redis_log);
  // One compile cache for all nodes (as a shared folder would be): a kernel compiles once.
  const std::vector<std::string> env = {"KAGENT_CACHE_DIR=" + dir.str() + "/cache"};
  // Two consumers each, whatever the machine's cores (the default follows its compile slots).
  auto node = [&](int i) {
    const std::string home = dir.str() + "/node" + std::to_string(i);
    std::filesystem::create_directories(home);
    return std::make_unique<ServeProcess>(
        home, home + "/data", suite, "",
        std::vector<std::string>{"--queue", redis.url(), "--queue-reclaim-s", "3", "--queue-consumers", "2"}, env);
  };
  Fronts fronts;
  fronts.ports = {0, 0, 0};

  // Node 2 alone takes the first jobs: two kernels to compile (seconds each), one per consumer;
  // a third job waits on the stream.
  auto n2 = node(2);
  REQUIRE_MESSAGE(n2->wait_ready(std::chrono::seconds(120)), n2->stderr_text());
  fronts.set(2, n2->port());
  std::vector<Request> slow(3);
  for (size_t i = 0; i < slow.size(); ++i) {
    slow[i].path = "/v1/evaluate";
    slow[i].front = 2;
    slow[i].body = {{"task_id", "1_relu"},
                    {"kernel_code", tiny_kernel_answer(i == 0 ? "v > 0.f ? v : 0.f" : "v * 3.f")},
                    {"request_id", fmt::format("slow-{}", i)}};
  }
  slow[2].body = {{"task_id", "1_relu"}, {"format", "kernelbench"}, {"kernel_code", not_python("waiting")}, {"request_id", "waiting"}};
  std::vector<std::vector<Request*>> slow_batch = {{&slow[0]}, {&slow[1]}}, waiting_batch = {{&slow[2]}};
  std::thread slow_clients([&] { run_all(slow_batch, fronts, deadline, 2); });
  while (metric(n2->port(), "kagent_queue_running_here") < 2 && Clock::now() < start + std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(metric(n2->port(), "kagent_queue_running_here") == 2);
  std::thread waiting_client([&] { run_all(waiting_batch, fronts, deadline, 1); });
  json depth;  // two running, one waiting for a free consumer (the heartbeat's picture: a second late at most)
  for (int i = 0; i < 50 && depth != 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    depth = health(n2->port())["queue"]["depth"];
  }
  CHECK(depth == 3);

  // Nodes 0 and 1 join late and take the job waiting on the stream at once.
  auto n0 = node(0), n1 = node(1);
  REQUIRE_MESSAGE(n0->wait_ready(std::chrono::seconds(120)), n0->stderr_text());
  REQUIRE_MESSAGE(n1->wait_ready(std::chrono::seconds(120)), n1->stderr_text());
  fronts.set(0, n0->port());
  fronts.set(1, n1->port());
  const auto joined = Clock::now();
  while (metric(n0->port(), "kagent_queue_running_here") + metric(n1->port(), "kagent_queue_running_here") < 1 &&
         metric(n0->port(), "kagent_queue_jobs_total") + metric(n1->port(), "kagent_queue_jobs_total") < 1 &&
         Clock::now() < joined + std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double late_took = metric(n0->port(), "kagent_queue_running_here") + metric(n1->port(), "kagent_queue_running_here") +
                           metric(n0->port(), "kagent_queue_jobs_total") + metric(n1->port(), "kagent_queue_jobs_total");
  CHECK_MESSAGE(late_took >= 1, "the nodes that joined late did not take the waiting job");

  // kill -9 node 2 while it holds its two jobs: they are reclaimed after 3 s idle.
  const double held = metric(n2->port(), "kagent_queue_running_here");
  CHECK(held >= 1);
  fronts.set(2, 0);
  n2->kill(SIGKILL);
  MESSAGE("node 2 killed holding ", held, " job(s), ",
          std::chrono::duration<double>(Clock::now() - start).count(), " s in");

  // The other 297: 117 evaluations, 30 batches of 3, 30 rewards of 2, 30 episodes (create and
  // 3 steps each), spread over the fronts (episodes over the two that live on). A third of the
  // answers are jobs for the queue, the rest format errors the fronts answer.
  std::vector<Request> rs(297);
  std::vector<std::vector<Request*>> units;
  size_t k = 0;
  for (int i = 0; i < 117; ++i, ++k) {
    rs[k].path = "/v1/evaluate";
    rs[k].front = i % 3;
    rs[k].body = {{"task_id", i % 2 ? "1_relu" : "2_double"}, {"format", "kernelbench"},
                  {"kernel_code", i % 3 ? two_blocks(fmt::format("e{}", i)) : not_python(fmt::format("e{}", i))},
                  {"request_id", fmt::format("ev-{}", i)}};
    units.push_back({&rs[k]});
  }
  for (int i = 0; i < 30; ++i, ++k) {
    rs[k].path = "/v1/evaluate/batch";
    rs[k].front = (i + 1) % 3;
    json items = json::array();
    for (int j = 0; j < 3; ++j)
      items.push_back({{"task_id", "1_relu"},
                       {"format", "kernelbench"},
                       {"kernel_code", j == 0 ? not_python(fmt::format("b{}_{}", i, j)) : two_blocks(fmt::format("b{}_{}", i, j))}});
    rs[k].body = {{"requests", items}, {"request_id", fmt::format("batch-{}", i)}};
    units.push_back({&rs[k]});
  }
  for (int i = 0; i < 30; ++i, ++k) {
    rs[k].path = "/v1/reward";
    rs[k].front = (i + 2) % 3;
    rs[k].body = {{"query", {"```python\n" + not_python(fmt::format("r{}a", i)) + "\n```", no_code(fmt::format("r{}b", i))}},
                  {"labels", {"1_relu", "2_double"}},
                  {"format", "kernelbench"},
                  {"request_id", fmt::format("reward-{}", i)}};
    units.push_back({&rs[k]});
  }
  std::vector<std::string> episode_ids;
  for (int i = 0; i < 30; ++i) {
    const std::string id = fmt::format("ep-{}", i);
    episode_ids.push_back(id);
    std::vector<Request*> unit;
    rs[k].path = "/v1/episodes";
    rs[k].front = i % 2;
    rs[k].pinned = true;
    rs[k].body = {{"task_id", "1_relu"}, {"format", "kernelbench"}, {"episode_id", id}, {"max_turns", 3}};
    unit.push_back(&rs[k++]);
    for (int t = 0; t < 3; ++t, ++k) {
      rs[k].path = "/v1/episodes/" + id + "/step";
      rs[k].front = i % 2;
      rs[k].pinned = true;
      const std::string tag = fmt::format("s{}_{}", i, t);
      rs[k].body = {{"action", {{"text", t == 1 ? "```python\n" + not_python(tag) + "\n```" : no_code(tag)}}},
                    {"request_id", fmt::format("{}-turn-{}", id, t)}};
      unit.push_back(&rs[k]);
    }
    units.push_back(unit);
  }
  REQUIRE(k == rs.size());
  // Interleaved: every kind of request in every part of the run.
  std::vector<std::vector<Request*>> mixed;
  for (size_t i = 0; i < units.size(); ++i) mixed.push_back(units[(i * 37) % units.size()]);

  // The first half, then Redis killed under the second half's load and started again.
  std::vector<std::vector<Request*>> first(mixed.begin(), mixed.begin() + static_cast<long>(mixed.size() / 2)),
      second(mixed.begin() + static_cast<long>(mixed.size() / 2), mixed.end());
  run_all(first, fronts, deadline);
  std::thread second_clients([&] { run_all(second, fronts, deadline); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  redis.kill();
  bool degraded = false;
  for (int i = 0; i < 100 && !degraded; ++i) {
    degraded = health(n0->port()).value("status", "") == "degraded";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK_MESSAGE(degraded, "/health did not say degraded while Redis was down");
  REQUIRE(redis.start());
  MESSAGE("Redis restarted ", std::chrono::duration<double>(Clock::now() - start).count(), " s in");
  second_clients.join();
  slow_clients.join();
  waiting_client.join();

  // Every request answered, with 200.
  int answered = 0;
  std::vector<Request*> all;
  for (auto& r : slow) all.push_back(&r);
  for (auto& r : rs) all.push_back(&r);
  for (Request* r : all) {
    INFO(r->path, " ", r->body.dump().substr(0, 200), " -> ", r->status, " ", r->answer.dump().substr(0, 300));
    CHECK(r->status == 200);
    answered += r->status == 200;
  }
  CHECK(answered == 300);

  // Asked again on another front, each stateless request answers the same bytes (its stored
  // result, never a second evaluation); each episode's recorded steps are the answers sent.
  int same = 0, asked = 0;
  for (Request* r : all) {
    if (r->pinned) continue;
    Request again = *r;
    again.front = r->front + 1;
    again.status = 0;
    send(again, fronts, deadline);
    ++asked;
    // What the repeat got, for a failure to say (once, in 4 runs under load, a repeat got 422
    // problem_error: the front or node that answered it is in its message).
    INFO(r->path, " ", r->body.value("request_id", ""), " first -> ", r->status, " ", r->answer.dump().substr(0, 200),
         "; again on front ", again.front, " -> ", again.status, " ", again.answer.dump().substr(0, 400));
    CHECK(again.status == 200);
    CHECK(again.answer == r->answer);
    same += again.status == 200 && again.answer == r->answer;
  }
  for (size_t e = 0; e < episode_ids.size(); ++e) {
    Request get;
    get.method = "GET";
    get.path = "/v1/episodes/" + episode_ids[e];
    get.front = static_cast<int>(e % 2);
    get.pinned = true;
    send(get, fronts, deadline);
    REQUIRE(get.status == 200);
    REQUIRE(get.answer["steps"].size() == 3);
    for (int t = 0; t < 3; ++t) {
      const Request* step = nullptr;
      for (auto& r : rs)
        if (r.path == "/v1/episodes/" + episode_ids[e] + "/step" && r.body["request_id"] == fmt::format("{}-turn-{}", episode_ids[e], t))
          step = &r;
      REQUIRE(step);
      CHECK(get.answer["steps"][t]["response"] == step->answer);
    }
  }
  CHECK(same == asked);

  // The killed node's jobs ran elsewhere; it is counted lost; the cluster's queue is empty.
  const double reclaimed = metric(n0->port(), "kagent_queue_reclaimed_total") + metric(n1->port(), "kagent_queue_reclaimed_total");
  CHECK(reclaimed >= 1);
  json h;
  for (int i = 0; i < 50; ++i) {
    h = health(n0->port());
    if (h["queue"]["nodes_lost"].size() == 1 && h["queue"]["depth"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(h.dump());
  CHECK(h["status"] == "ok");
  CHECK(h["queue"]["nodes_lost"].size() == 1);
  CHECK(h["queue"]["nodes"].size() == 2);
  CHECK(h["queue"]["depth"] == 0);
  MESSAGE("300 of 300 answered, ", same, " of ", asked, " asked again answered the same; reclaimed ", reclaimed,
          "; jobs by node 0/1: ", metric(n0->port(), "kagent_queue_jobs_total"), "/", metric(n1->port(), "kagent_queue_jobs_total"),
          "; ", std::chrono::duration<double>(Clock::now() - start).count(), " s");
}

TEST_CASE("cluster: a job every node that took it died on is answered job_abandoned, not run again") {
  const std::string redis_binary = find_redis_server();
  if (redis_binary.empty()) {
    MESSAGE("redis-server is not installed (apt-get install redis-server; scripts/setup.sh does): the test is skipped");
    return;
  }
  TempDir dir("kagent-serve-abandoned");
  write_tiny_suite(dir, "suite");
  std::filesystem::create_directories(dir.str() + "/redis");
  const int port = free_port();
  RedisProcess redis(redis_binary, dir.str() + "/redis", port);
  REQUIRE_MESSAGE(redis.start(), kagent::read_file(dir.str() + "/redis/redis.log"));

  // Two jobs, as a front adds them; dead consumers took them: "poison" three times (a read, two
  // reclaims: three nodes died on it), "survivor" once.
  CHECK(redis_command(port, {"XGROUP", "CREATE", "kagent:jobs", "kagent", "0", "MKSTREAM"}).rfind("+OK", 0) == 0);
  const std::string problem = dir.str() + "/suite/level1/1_relu.py";
  const auto job = [&](const std::string& key) {
    return json{{"key", key},        {"sha256", "test"},         {"problem_path", problem},
                {"problem_name", "1_relu.py"}, {"problem_source", kagent::read_file(problem)},
                {"format", "kernelbench"}, {"code", not_python(key)}, {"front", "gone"}, {"enqueued_ms", 0}}
        .dump();
  };
  const std::string poison = bulk(redis_command(port, {"XADD", "kagent:jobs", "*", "job", job("poison")}));
  const std::string survivor = bulk(redis_command(port, {"XADD", "kagent:jobs", "*", "job", job("survivor")}));
  REQUIRE_FALSE(poison.empty());
  REQUIRE_FALSE(survivor.empty());
  redis_command(port, {"XREADGROUP", "GROUP", "kagent", "dead-a", "COUNT", "2", "STREAMS", "kagent:jobs", ">"});
  redis_command(port, {"XCLAIM", "kagent:jobs", "kagent", "dead-b", "0", poison});
  redis_command(port, {"XCLAIM", "kagent:jobs", "kagent", "dead-c", "0", poison});

  // A live node takes both over once they are a second idle: its take of "poison" is the
  // fourth, past --queue-max-attempts 3.
  const std::string home = dir.str() + "/node";
  std::filesystem::create_directories(home);
  ServeProcess node(home, home + "/data", dir.str() + "/suite", "",
                    {"--queue", redis.url(), "--queue-reclaim-s", "1", "--queue-max-attempts", "3"},
                    {"KAGENT_CACHE_DIR=" + dir.str() + "/cache"});
  REQUIRE_MESSAGE(node.wait_ready(std::chrono::seconds(120)), node.stderr_text());
  json abandoned, ran;
  for (int i = 0; i < 600 && (abandoned.is_null() || ran.is_null()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (const auto v = bulk(redis_command(port, {"GET", "kagent:result:poison"})); !v.empty()) abandoned = json::parse(v);
    if (const auto v = bulk(redis_command(port, {"GET", "kagent:result:survivor"})); !v.empty()) ran = json::parse(v);
  }
  INFO(node.stderr_text());
  REQUIRE(abandoned.is_object());
  CHECK(abandoned["error"]["status"] == 500);
  CHECK(abandoned["error"]["code"] == "job_abandoned");
  CHECK(has(abandoned["error"]["message"].get<std::string>(), "taken by 3 nodes"));
  CHECK_FALSE(abandoned.contains("result"));  // not run
  REQUIRE(ran.is_object());
  CHECK(ran.contains("result"));  // under the cap: run as any reclaimed job
  CHECK_FALSE(ran.contains("error"));
  CHECK(redis_command(port, {"XLEN", "kagent:jobs"}).rfind(":0", 0) == 0);  // both acknowledged and removed
  CHECK(has(node.stderr_text(), "queue job poison (problem 1_relu.py) abandoned: taken 4 times"));
}
