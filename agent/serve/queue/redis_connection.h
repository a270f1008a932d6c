// One connection to the cluster's Redis (hiredis' blocking API), owning its context: it is freed
// with the object. A connection that breaks (Redis restarted, the network down) is dropped and
// made again by the next command, so callers only decide how long to retry. Commands go as
// argument vectors, never as formatted strings, so a job's bytes are never read as Redis syntax.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "serve/redis_url.h"

struct redisContext;
struct redisReply;

namespace kagent::serve {

// Redis could not be reached, or the connection broke mid-command: retry later.
struct RedisUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Redis answered with an error reply (NOGROUP, BUSYGROUP, a wrong type, ...).
struct RedisReplyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ReplyDeleter {
  void operator()(redisReply* r) const;
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

class RedisConnection {
 public:
  // `timeout` bounds the connect and every command: a blocking read (XREADGROUP BLOCK) must ask
  // for less. Connects on the first command.
  explicit RedisConnection(RedisUrl url, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Throws RedisUnavailable (the connection is dropped: the next command reconnects) or
  // RedisReplyError; never returns an error reply.
  Reply command(const std::vector<std::string>& args);

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };
  void connect();

  RedisUrl url_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<redisContext, ContextDeleter> ctx_;
};

// Reading replies: a string (bulk or status) or "" for nil; an integer; the elements of an array.
std::string reply_string(const redisReply* r);
bool reply_nil(const redisReply* r);
long long reply_integer(const redisReply* r);
std::vector<const redisReply*> reply_elements(const redisReply* r);

// The cluster's stream and its consumer group, made unless another node made them already: at
// a node's start, and again by a consumer that finds them gone (a Redis that lost its data).
void create_group(RedisConnection& conn);

// Runs `attempt` until Redis answers it, half a second between tries, for as long as
// `go_on(error)` says after each RedisUnavailable (it may throw instead, e.g. past a deadline);
// false when it said stop. The one retry loop of the queue's callers.
template <class Attempt, class GoOn>
bool retry_unavailable(Attempt&& attempt, GoOn&& go_on) {
  for (;;) {
    try {
      attempt();
      return true;
    } catch (const RedisUnavailable& e) {
      if (!go_on(e)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

}  // namespace kagent::serve
