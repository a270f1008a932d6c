#include "serve/queue/redis_connection.h"

#include "serve/queue/queue_job.h"

#include <sys/time.h>

#include <hiredis/hiredis.h>

#include <fmt/format.h>

namespace kagent::serve {

void ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }
void RedisConnection::ContextDeleter::operator()(redisContext* c) const { redisFree(c); }

RedisConnection::RedisConnection(RedisUrl url, std::chrono::milliseconds timeout) : url_(std::move(url)), timeout_(timeout) {}

RedisConnection::~RedisConnection() = default;

void RedisConnection::connect() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout_).count();
  const timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
  std::unique_ptr<redisContext, ContextDeleter> c(redisConnectWithTimeout(url_.host.c_str(), url_.port, tv));
  if (!c) throw RedisUnavailable(fmt::format("cannot connect to {}: out of memory", url_.text()));
  if (c->err) throw RedisUnavailable(fmt::format("cannot connect to {}: {}", url_.text(), c->errstr));
  if (redisSetTimeout(c.get(), tv) != REDIS_OK)
    throw RedisUnavailable(fmt::format("cannot set the timeout of the connection to {}", url_.text()));
  ctx_ = std::move(c);
  if (url_.db != 0) command({"SELECT", std::to_string(url_.db)});
}

Reply RedisConnection::command(const std::vector<std::string>& args) {
  if (!ctx_) connect();
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(redisCommandArgv(ctx_.get(), static_cast<int>(args.size()), argv.data(), lens.data()));
  if (!raw) {
    // The context is unusable after an I/O error or a timeout: a fresh one next time.
    const std::string why = ctx_->errstr;
    ctx_.reset();
    throw RedisUnavailable(fmt::format("{}: {}", url_.text(), why.empty() ? "connection lost" : why));
  }
  Reply reply(raw);
  if (reply->type == REDIS_REPLY_ERROR) throw RedisReplyError(std::string(reply->str, reply->len));
  return reply;
}

std::string reply_string(const redisReply* r) {
  if (!r || (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)) return {};
  return std::string(r->str, r->len);
}

bool reply_nil(const redisReply* r) { return !r || r->type == REDIS_REPLY_NIL; }

long long reply_integer(const redisReply* r) {
  if (!r) return 0;
  if (r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r->type == REDIS_REPLY_STRING) return std::stoll(std::string(r->str, r->len));
  return 0;
}

std::vector<const redisReply*> reply_elements(const redisReply* r) {
  std::vector<const redisReply*> out;
  if (!r || r->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i < r->elements; ++i) out.push_back(r->element[i]);
  return out;
}

void create_group(RedisConnection& conn) {
  try {
    // From the stream's start ("0"), not "$": jobs a front added before any worker joined are
    // the group's too.
    conn.command({"XGROUP", "CREATE", queue_keys::kStream, queue_keys::kGroup, "0", "MKSTREAM"});
  } catch (const RedisReplyError& e) {
    if (std::string(e.what()).rfind("BUSYGROUP", 0) != 0) throw;  // the group exists: another node made it
  }
}

}  // namespace kagent::serve
